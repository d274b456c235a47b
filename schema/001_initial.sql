-- 001_initial.sql: jobs, task configurations, instances, updates and their events.
--
-- Times are ms since the epoch. Enum columns hold the Thrift enum values
-- (ScheduleStatus, JobUpdateStatus, JobUpdateAction). Blobs hold Thrift
-- binary-protocol encodings.

-- Every task configuration ever used, stored once. hash is the hex SHA-256
-- of the canonical binary encoding; version numbers a job's configurations
-- in the order they first appeared (1, 2, 3, ...).
CREATE TABLE task_configs (
  id          INTEGER PRIMARY KEY,
  hash        TEXT    NOT NULL UNIQUE,
  role        TEXT    NOT NULL,
  environment TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  version     INTEGER NOT NULL,
  blob        BLOB    NOT NULL,
  created_ms  INTEGER NOT NULL,
  UNIQUE (role, environment, name, version)
);

-- A job exists while it has a row here.
CREATE TABLE jobs (
  id          INTEGER PRIMARY KEY,
  role        TEXT    NOT NULL,
  environment TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  owner       TEXT    NOT NULL DEFAULT '',
  created_ms  INTEGER NOT NULL,
  UNIQUE (role, environment, name)
);

-- One row per instance slot. config_id is the configuration the slot should
-- run (the scheduler's intent); the other columns are the runtime's facts.
CREATE TABLE instances (
  job_id        INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  instance_id   INTEGER NOT NULL,
  config_id     INTEGER NOT NULL REFERENCES task_configs (id),
  status        INTEGER NOT NULL DEFAULT 0,   -- ScheduleStatus, PENDING at first
  run_id        INTEGER NOT NULL DEFAULT 0,   -- grows with each start of the slot
  run_config_id INTEGER REFERENCES task_configs (id), -- config of what actually runs
  pid           INTEGER,
  pid_start     INTEGER,                      -- process start time (clock ticks since boot)
  failure_count INTEGER NOT NULL DEFAULT 0,
  status_ms     INTEGER NOT NULL DEFAULT 0,   -- when status last changed
  PRIMARY KEY (job_id, instance_id)
) WITHOUT ROWID;
CREATE INDEX instances_by_config ON instances (config_id);

-- Status history of each slot (TaskEvent).
CREATE TABLE task_events (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  instance_id INTEGER NOT NULL,
  ts_ms       INTEGER NOT NULL,
  status      INTEGER NOT NULL,
  message     TEXT
);
CREATE INDEX task_events_by_instance ON task_events (job_id, instance_id, id);

-- Stable named ports: one per (job key, instance, port name), kept across
-- replaces and restarts, never shared.
CREATE TABLE ports (
  role        TEXT    NOT NULL,
  environment TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  instance_id INTEGER NOT NULL,
  port_name   TEXT    NOT NULL,
  port        INTEGER NOT NULL UNIQUE,
  PRIMARY KEY (role, environment, name, instance_id, port_name)
) WITHOUT ROWID;

-- Job updates. The job key is kept as text so history outlives the job.
-- request: JobUpdateRequest; instructions: JobUpdateInstructions (initial
-- state, desired state, settings) as recorded at start.
CREATE TABLE updates (
  id            INTEGER PRIMARY KEY,
  uid           TEXT    NOT NULL UNIQUE,      -- JobUpdateKey.id
  role          TEXT    NOT NULL,
  environment   TEXT    NOT NULL,
  name          TEXT    NOT NULL,
  user          TEXT    NOT NULL,
  status        INTEGER NOT NULL,             -- JobUpdateStatus
  active        INTEGER NOT NULL,             -- 1 while status is not terminal
  created_ms    INTEGER NOT NULL,
  modified_ms   INTEGER NOT NULL,
  request       BLOB    NOT NULL,
  instructions  BLOB    NOT NULL,
  metadata      BLOB,                         -- JobUpdateSummary holding only metadata
  desired_config_id INTEGER REFERENCES task_configs (id),
  last_pulse_ms INTEGER NOT NULL DEFAULT 0,   -- 0: never pulsed
  progress      TEXT    NOT NULL DEFAULT '{}' -- engine's own bookkeeping (JSON)
);
CREATE INDEX updates_by_created ON updates (created_ms DESC, id DESC);
CREATE INDEX updates_by_job ON updates (role, environment, name, created_ms DESC, id DESC);
CREATE INDEX updates_by_role ON updates (role, created_ms DESC, id DESC);
CREATE INDEX updates_by_user ON updates (user, created_ms DESC, id DESC);
CREATE INDEX updates_by_status ON updates (status, created_ms DESC, id DESC);
-- At most one active update per job.
CREATE UNIQUE INDEX updates_one_active ON updates (role, environment, name) WHERE active = 1;

-- The instances an update changes (unchanged ones have no row).
-- initial_config_id / desired_config_id: NULL means absent.
CREATE TABLE update_instances (
  update_id         INTEGER NOT NULL REFERENCES updates (id) ON DELETE CASCADE,
  instance_id       INTEGER NOT NULL,
  initial_config_id INTEGER REFERENCES task_configs (id),
  desired_config_id INTEGER REFERENCES task_configs (id),
  state             INTEGER NOT NULL DEFAULT 0, -- engine's per-instance state
  failures          INTEGER NOT NULL DEFAULT 0,
  started_ms        INTEGER NOT NULL DEFAULT 0, -- when work on it (this way) began
  PRIMARY KEY (update_id, instance_id)
) WITHOUT ROWID;

CREATE TABLE update_events (
  id          INTEGER PRIMARY KEY,
  update_id   INTEGER NOT NULL REFERENCES updates (id) ON DELETE CASCADE,
  status      INTEGER NOT NULL,
  ts_ms       INTEGER NOT NULL,
  user        TEXT,
  message     TEXT
);
CREATE INDEX update_events_by_update ON update_events (update_id, id);

CREATE TABLE instance_events (
  id          INTEGER PRIMARY KEY,
  update_id   INTEGER NOT NULL REFERENCES updates (id) ON DELETE CASCADE,
  instance_id INTEGER NOT NULL,
  ts_ms       INTEGER NOT NULL,
  action      INTEGER NOT NULL,
  message     TEXT
);
CREATE INDEX instance_events_by_update ON instance_events (update_id, id);
