-- 018_notices.pg.sql: 018_notices.sql for PostgreSQL (numbers are
-- BIGINT): webhook notices not yet delivered, one row per webhook and
-- notice, and the last notice number given.
CREATE TABLE webhook_notices (
  webhook     TEXT   NOT NULL,
  seq         BIGINT NOT NULL,
  delivery_id TEXT   NOT NULL,
  event       TEXT   NOT NULL,
  body        TEXT   NOT NULL,
  PRIMARY KEY (webhook, seq)
);
CREATE TABLE notice_seq (
  id   INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  last BIGINT  NOT NULL
);
INSERT INTO notice_seq (id, last) VALUES (1, 0);
