-- 015_reasons.sql: reason codes of rollout plans and stages.
--
-- A reason code says why a plan or a stage is in its status, as a word
-- scripts can match (stagger(1), CONDITIONS): the plan's and each stage's
-- present one, and the one each status change was recorded with. Rows from
-- before this migration have none (''): readers take the status's own.
ALTER TABLE rollout_plans ADD COLUMN reason_code TEXT NOT NULL DEFAULT '';
ALTER TABLE rollout_stages ADD COLUMN reason_code TEXT NOT NULL DEFAULT '';
ALTER TABLE rollout_events ADD COLUMN reason_code TEXT;
