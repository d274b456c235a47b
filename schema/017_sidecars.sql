-- 017_sidecars.sql: sidecar sets, and the sidecars of the fleet runtime's
-- pods.
--
-- sidecar_sets: one row a set: its name, the patterns of the job keys it
-- selects, its newest version, its last update (from_version to
-- to_version, its status (a JobUpdateStatus), since when and why, its
-- settings: a SidecarUpdateSettings, Thrift binary), the version new pods
-- get, who made it and when.
-- sidecar_versions: every version of a set's sidecar (a Sidecar, Thrift
-- binary, with its canonical hash to tell a new version from the same).
-- sidecar_events: the updates' status changes and each instance they
-- moved, oldest first (job: role/environment/name as it was).
-- fleet_sidecars: the fleet runtime's facts of each sidecar in each pod:
-- the version it is asked to run, the container slot serving (1 or 2 for a
-- hot sidecar, 1 for another; 0: none) and its version, and the failed
-- starts of the version asked for; written before the runtime acts, so a
-- restarted staggerd knows which slot to keep.
CREATE TABLE sidecar_sets (
  id             INTEGER PRIMARY KEY,
  name           TEXT    NOT NULL UNIQUE,
  role_pattern   TEXT    NOT NULL,
  env_pattern    TEXT    NOT NULL,
  name_pattern   TEXT    NOT NULL,
  version        INTEGER NOT NULL,
  from_version   INTEGER NOT NULL DEFAULT 0,
  to_version     INTEGER NOT NULL,
  inject_version INTEGER NOT NULL,
  status         INTEGER NOT NULL,
  status_ms      INTEGER NOT NULL,
  reason         TEXT    NOT NULL DEFAULT '',
  settings       BLOB    NOT NULL,
  "user"         TEXT    NOT NULL DEFAULT '',
  created_ms     INTEGER NOT NULL
);

CREATE TABLE sidecar_versions (
  set_id     INTEGER NOT NULL REFERENCES sidecar_sets (id) ON DELETE CASCADE,
  version    INTEGER NOT NULL,
  hash       TEXT    NOT NULL,
  sidecar    BLOB    NOT NULL,
  created_ms INTEGER NOT NULL,
  "user"     TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (set_id, version)
);

CREATE TABLE sidecar_events (
  id          INTEGER PRIMARY KEY,
  set_id      INTEGER NOT NULL REFERENCES sidecar_sets (id) ON DELETE CASCADE,
  ts_ms       INTEGER NOT NULL,
  status      INTEGER NOT NULL,
  job         TEXT,
  instance_id INTEGER,
  message     TEXT    NOT NULL,
  "user"      TEXT
);
CREATE INDEX sidecar_events_by_set ON sidecar_events (set_id, id);

CREATE TABLE fleet_sidecars (
  job_id          INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  instance_id     INTEGER NOT NULL,
  sidecar         TEXT    NOT NULL,
  want_version    INTEGER NOT NULL,
  serving_slot    INTEGER NOT NULL DEFAULT 0,
  serving_version INTEGER NOT NULL DEFAULT 0,
  failures        INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, instance_id, sidecar)
);
