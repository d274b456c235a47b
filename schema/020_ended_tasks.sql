-- 020_ended_tasks.sql: tasks that ended with their instance (killed, or
-- left out by a smaller update), kept as Aurora keeps terminal tasks until
-- they are pruned: the newest 100 of each job (Aurora's
-- history_max_per_job_threshold), none older than keep_events_days, and
-- none that pruneTasks removed. Keyed by the job's key, not its row: a job
-- whose every instance was killed is gone, its ended tasks are not.
-- task: the ScheduledTask as it ended (Thrift binary, its configuration and
-- newest events in it).
CREATE TABLE ended_tasks (
  id          INTEGER PRIMARY KEY,
  role        TEXT    NOT NULL,
  environment TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  instance_id INTEGER NOT NULL,
  ended_ms    INTEGER NOT NULL,
  task        BLOB    NOT NULL
);
CREATE INDEX ended_tasks_by_job ON ended_tasks (role, environment, name, id);
