-- 014_surge.sql: surge instances, the extra instances an update with
-- maxSurge runs beyond the job's count (new instance slots with ids past
-- every instance the job has or will have). A row lives from the step that
-- starts the instance to the step that sees it gone, so a restarted
-- staggerd knows which instances to remove, also those of an update that
-- ended (aborted, failed) while they were being stopped.
-- config_id: what it should run (0: being removed); failures and baseline
-- count its failed runs as update_instances does.
CREATE TABLE update_surge (
  job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  instance_id INTEGER NOT NULL,
  update_id   INTEGER NOT NULL REFERENCES updates (id) ON DELETE CASCADE,
  config_id   INTEGER NOT NULL DEFAULT 0,
  failures    INTEGER NOT NULL DEFAULT 0,
  baseline    INTEGER NOT NULL DEFAULT 0,
  started_ms  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, instance_id)
);
CREATE INDEX update_surge_update ON update_surge (update_id);
