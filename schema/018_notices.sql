-- 018_notices.sql: webhook notices not yet delivered, so that those
-- waiting when staggerd stops (or a leader goes) are sent after it
-- starts again (or by the new leader).
--
-- One row per webhook and notice, written in the transaction of the step
-- that recorded the change (so a stored change always has its notices and
-- a step that was rolled back has none), deleted once the webhook took it,
-- gave it up after max_attempts, or dropped it as the oldest over
-- queue_size. webhook is the [notify NAME] group's NAME ('' for
-- [notify]); seq the notice's number, the same for every webhook, from
-- notice_seq, which only grows (rows are deleted, numbers never reused);
-- delivery_id the notice's UUID (X-Stagger-Delivery); event KIND.STATUS
-- (X-Stagger-Event); body the JSON POSTed, signed again at each attempt.
CREATE TABLE webhook_notices (
  webhook     TEXT    NOT NULL,
  seq         INTEGER NOT NULL,
  delivery_id TEXT    NOT NULL,
  event       TEXT    NOT NULL,
  body        TEXT    NOT NULL,
  PRIMARY KEY (webhook, seq)
);
CREATE TABLE notice_seq (
  id   INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT INTO notice_seq (id, last) VALUES (1, 0);
