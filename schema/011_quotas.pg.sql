-- 011_quotas.pg.sql: 011_quotas.sql for PostgreSQL (BYTEA). Each role's
-- quota, as setQuota gave it: a ResourceAggregate (Thrift binary) of
-- exactly numCpus, ramMb and diskMb. A role with no row has none.
CREATE TABLE quotas (
  role  TEXT  NOT NULL PRIMARY KEY,
  quota BYTEA NOT NULL
);
