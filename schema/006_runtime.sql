-- 006_runtime.sql: what the local runtime needs to survive its own crash.
--
-- next_run_id, next_config_id, next_pid, next_pid_start: during a hot
-- upgrade, the run starting beside run_id (0: none). Written before that
-- run's fork, like run_id for a plain start, so a restarted daemon knows
-- which processes it may find.
-- stop_reason: why the runtime asked the current run to stop (0: it did
-- not; 1 kill, 2 replace, 3 restart, 4 failed, 5 old version, 6 abandoned
-- new version), so an exit nobody watched is judged by what it was and an
-- interrupted replace resumes as a replace.
ALTER TABLE instances ADD COLUMN next_run_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE instances ADD COLUMN next_config_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE instances ADD COLUMN next_pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE instances ADD COLUMN next_pid_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE instances ADD COLUMN stop_reason INTEGER NOT NULL DEFAULT 0;
