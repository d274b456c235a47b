-- 003_leader.sql: who leads the replicas sharing this database.
--
-- One row. A replica that takes the leadership lock (a PostgreSQL session
-- advisory lock) increments epoch and writes who it is; every write
-- transaction of a leader first reads this row FOR SHARE and gives up
-- unless the epoch is still its own, so a leader that lost the lock cannot
-- write after another took over. since_ms: when the current leader took over.
CREATE TABLE stagger_leader (
  id       INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  epoch    BIGINT  NOT NULL,
  holder   TEXT    NOT NULL,
  url      TEXT    NOT NULL,
  since_ms BIGINT  NOT NULL
);
INSERT INTO stagger_leader (id, epoch, holder, url, since_ms) VALUES (1, 0, '', '', 0);
