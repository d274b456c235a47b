-- 011_quotas.sql: each role's quota, as setQuota gave it: a
-- ResourceAggregate (Thrift binary) of exactly numCpus, ramMb and diskMb.
-- A role with no row has none (zero of each).
CREATE TABLE quotas (
  role  TEXT NOT NULL PRIMARY KEY,
  quota BLOB NOT NULL
);
