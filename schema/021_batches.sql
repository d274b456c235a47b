-- 021_batches.sql: the batch each instance event's work belongs to.
--
-- An update works through its instances in batches (for a queue, groups of
-- its group size); the engine records the batch of the work an instance
-- event is about (0 for the first, counted again from 0 when a rollback
-- begins), so an update's timeline can show its batches afterwards. Rows
-- from before this migration have none (NULL).
ALTER TABLE instance_events ADD COLUMN batch INTEGER;
