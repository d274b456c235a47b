-- 009_hosts.sql: the fleet runtime's hosts that are drained: nothing new
-- is placed on them, whichever replica leads and however often it
-- restarts, until they are opened again.
CREATE TABLE fleet_drained_hosts (
  host TEXT NOT NULL PRIMARY KEY
);
