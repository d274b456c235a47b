-- 007_fleet.sql: the fleet runtime's facts.
--
-- fleet_placements: the host each instance slot of the fleet runtime is
-- placed on, kept across replaces and restarts so that an update never
-- reshuffles the fleet; dropped with the slot (or its job).
CREATE TABLE fleet_placements (
  job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  instance_id INTEGER NOT NULL,
  host        TEXT    NOT NULL,
  PRIMARY KEY (job_id, instance_id)
) WITHOUT ROWID;
