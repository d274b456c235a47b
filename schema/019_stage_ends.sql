-- 019_stage_ends.sql: where each stage of a rollout plan ended, and the
-- configuration its job file makes.
--
-- A plan that has ended shows each stage as it ended, from these columns,
-- not as its job stands now (a later plan or update may have moved it).
-- end_ms: when the end was recorded (0: not recorded; rows from before
-- this migration have none, and readers show the job as it stands);
-- end_current: the version (JobConfigVersion.version) most of the job's
-- instances were to run; end_desired: the one the stage moved to;
-- end_target: the one it was moving the job to then; end_ready of
-- end_want instances ran end_target healthy; end_unready: the others,
-- a JSON array of {"instance", "status", "reason"}; end_message: why the
-- stage stood where it did.
-- planned_config_id: the stored configuration equal to the stage's job
-- file as the plan began (0: a new one, numbered once its update stores it).
ALTER TABLE rollout_stages ADD COLUMN end_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollout_stages ADD COLUMN end_current INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollout_stages ADD COLUMN end_desired INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollout_stages ADD COLUMN end_target INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollout_stages ADD COLUMN end_ready INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollout_stages ADD COLUMN end_want INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollout_stages ADD COLUMN end_unready TEXT NOT NULL DEFAULT '[]';
ALTER TABLE rollout_stages ADD COLUMN end_message TEXT NOT NULL DEFAULT '';
ALTER TABLE rollout_stages ADD COLUMN planned_config_id INTEGER NOT NULL DEFAULT 0;
