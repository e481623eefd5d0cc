-- The secret fields of an integration's configurations (inboundWebhookSigningKey)
-- are sealed like its credentials, in their own column; rows written before
-- this migration are sealed by the first start that has the server secret.
ALTER TABLE integrations ADD COLUMN secret_configurations TEXT NOT NULL DEFAULT '';

-- Settings of the store itself: the check value sealed with the server secret,
-- which tells a changed HERALD_SECRET at start.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
