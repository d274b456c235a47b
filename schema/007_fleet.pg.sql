-- 007_fleet.pg.sql: 007_fleet.sql for PostgreSQL (no WITHOUT ROWID; ids
-- are BIGINT as in 001_initial.pg.sql).
CREATE TABLE fleet_placements (
  job_id      BIGINT  NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  instance_id INTEGER NOT NULL,
  host        TEXT    NOT NULL,
  PRIMARY KEY (job_id, instance_id)
);
