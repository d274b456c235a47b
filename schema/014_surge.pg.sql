-- 014_surge.pg.sql: 014_surge.sql for PostgreSQL (ids are BIGINT as in
-- 001_initial.pg.sql). Surge instances: the extra instances an update with
-- maxSurge runs beyond the job's count, known from the step that starts
-- one to the step that sees it gone.
CREATE TABLE update_surge (
  job_id      BIGINT  NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  instance_id INTEGER NOT NULL,
  update_id   BIGINT  NOT NULL REFERENCES updates (id) ON DELETE CASCADE,
  config_id   BIGINT  NOT NULL DEFAULT 0,
  failures    BIGINT  NOT NULL DEFAULT 0,
  baseline    BIGINT  NOT NULL DEFAULT 0,
  started_ms  BIGINT  NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, instance_id)
);
CREATE INDEX update_surge_update ON update_surge (update_id);
