-- 002_engine.sql: what the update engine needs beyond 001.
--
-- baseline: the runtime's failure count of the slot when work on the
-- instance began in the current direction, so failures are counted from
-- there after a restart too.
ALTER TABLE update_instances ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0;

-- Active updates are reloaded at every start.
CREATE INDEX updates_active ON updates (active) WHERE active = 1;
