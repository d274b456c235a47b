-- 016_maintenance.sql: hosts in maintenance, as Aurora's MaintenanceMode
-- (SCHEDULED 2, DRAINING 3, DRAINED 4; a host without a row is NONE), with
-- the drain asked of a DRAINING host (a HostMaintenanceRequest, Thrift
-- binary: the SLA policy for tasks without one and the timeout; NULL when
-- its instances are moved off by hand, `stagger host drain`). The fleet
-- runtime's drained hosts start out DRAINING.
CREATE TABLE host_maintenance (
  host     TEXT    NOT NULL PRIMARY KEY,
  mode     INTEGER NOT NULL,
  request  BLOB,
  since_ms INTEGER NOT NULL DEFAULT 0
);
INSERT INTO host_maintenance (host, mode) SELECT host, 3 FROM fleet_drained_hosts;
