-- Uplinks' heartbeats (controller/floor/alive.py): a table is online while its uplink speaks.
ALTER TABLE tables ADD COLUMN heartbeat_at timestamptz;   -- the uplink's last heartbeat
ALTER TABLE tables ADD COLUMN online_since timestamptz;   -- its first heartbeat after a silence
