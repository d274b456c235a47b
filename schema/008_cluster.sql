-- 008_cluster.sql: which leader wrote each engine step, and the replicas.
--
-- epoch: the stagger_leader epoch the writing replica led under (0 for a
-- single replica on SQLite), so the order of leaders can be checked
-- afterwards: no event of an older epoch follows one of a newer epoch.
ALTER TABLE update_events ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
ALTER TABLE instance_events ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;

-- Every replica on this database says it is alive here, each lease tick:
-- its name (host:pid), advertised URL, lease, when it started and when it
-- was last seen. Rows not seen for an hour are deleted.
CREATE TABLE stagger_replicas (
  holder     TEXT   NOT NULL PRIMARY KEY,
  url        TEXT   NOT NULL,
  lease_ms   BIGINT NOT NULL,
  started_ms BIGINT NOT NULL,
  seen_ms    BIGINT NOT NULL
);
