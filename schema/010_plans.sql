-- 010_plans.sql: rollout plans: ordered, gated updates of several jobs.
--
-- rollout_plans: one row a plan: the plan as it was started (a RolloutPlan,
-- Thrift binary; its rollbackOnFailure also in a column of its own, for
-- lists), its status (RolloutStatus), since when and why, and
-- whether it is winding down (stopping: start no new stage; back: roll the
-- stages that changed their jobs back once nothing runs).
-- rollout_stages: where each stage stands: its status and reason, the
-- update that moves it forward and the one that takes it back, what its
-- job ran before the plan (the configuration most of its instances ran, and
-- how many it had), the gates passed in the phase it waits in, whether it
-- must go back even when the plan does not (an after-gate failed), whether
-- its going back was started, and who approved it.
-- rollout_events: the plan's and the stages' status changes, approvals,
-- and every gate attempt (gate set), each with the epoch of the replica
-- that wrote it.
CREATE TABLE rollout_plans (
  id          INTEGER PRIMARY KEY,
  uid         TEXT    NOT NULL UNIQUE,
  name        TEXT    NOT NULL,
  user        TEXT    NOT NULL,
  status      INTEGER NOT NULL,
  active      INTEGER NOT NULL,
  since_ms    INTEGER NOT NULL,
  created_ms  INTEGER NOT NULL,
  reason      TEXT    NOT NULL DEFAULT '',
  stopping    INTEGER NOT NULL DEFAULT 0,
  back        INTEGER NOT NULL DEFAULT 0,
  rollback_on_failure INTEGER NOT NULL DEFAULT 1,
  plan        BLOB    NOT NULL
);
CREATE INDEX rollout_plans_by_created ON rollout_plans (created_ms DESC, id DESC);
CREATE INDEX rollout_plans_by_active ON rollout_plans (active, created_ms DESC);

CREATE TABLE rollout_stages (
  plan_id         INTEGER NOT NULL REFERENCES rollout_plans (id) ON DELETE CASCADE,
  idx             INTEGER NOT NULL,
  name            TEXT    NOT NULL,
  status          INTEGER NOT NULL,
  since_ms        INTEGER NOT NULL,
  reason          TEXT    NOT NULL DEFAULT '',
  update_uid      TEXT,
  rollback_uid    TEXT,
  prior_config_id INTEGER NOT NULL DEFAULT 0,
  prior_count     INTEGER NOT NULL DEFAULT 0,
  prior_known     INTEGER NOT NULL DEFAULT 0,
  gates_passed    INTEGER NOT NULL DEFAULT 0,
  roll_back       INTEGER NOT NULL DEFAULT 0,
  rolled          INTEGER NOT NULL DEFAULT 0,
  approved_by     TEXT,
  PRIMARY KEY (plan_id, idx)
);

CREATE TABLE rollout_events (
  id       INTEGER PRIMARY KEY,
  plan_id  INTEGER NOT NULL REFERENCES rollout_plans (id) ON DELETE CASCADE,
  stage    TEXT,
  ts_ms    INTEGER NOT NULL,
  status   INTEGER NOT NULL,
  user     TEXT,
  message  TEXT,
  gate     TEXT,
  phase    TEXT,
  attempt  INTEGER NOT NULL DEFAULT 0,
  passed   INTEGER NOT NULL DEFAULT 0,
  epoch    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX rollout_events_by_plan ON rollout_events (plan_id, id);
