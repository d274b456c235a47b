-- 016_maintenance.pg.sql: 016_maintenance.sql for PostgreSQL (BYTEA,
-- BIGINT). Hosts in maintenance (SCHEDULED 2, DRAINING 3, DRAINED 4; no
-- row: NONE) and the drain asked of a DRAINING host (HostMaintenanceRequest,
-- Thrift binary; NULL: moved off by hand). The fleet runtime's drained hosts
-- start out DRAINING.
CREATE TABLE host_maintenance (
  host     TEXT    NOT NULL PRIMARY KEY,
  mode     INTEGER NOT NULL,
  request  BYTEA,
  since_ms BIGINT  NOT NULL DEFAULT 0
);
INSERT INTO host_maintenance (host, mode) SELECT host, 3 FROM fleet_drained_hosts;
