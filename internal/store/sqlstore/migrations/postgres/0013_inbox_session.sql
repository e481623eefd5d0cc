-- Inbox sessions (POST /v1/inbox/session): each environment's public
-- application identifier ("app_" and 20 random hex characters, made here for
-- the environments that exist already), whether its sessions may open
-- without a subscriberHash (local development), and an encrypted copy of
-- each API key (sealed with the server secret, '' for the keys created
-- before this migration) that checks subscriberHash values.
ALTER TABLE environments ADD COLUMN identifier TEXT COLLATE "C";
UPDATE environments SET identifier = 'app_' || substr(md5(gen_random_uuid()::text), 1, 20) WHERE identifier IS NULL;
CREATE UNIQUE INDEX environments_identifier ON environments (identifier);
ALTER TABLE environments ADD COLUMN inbox_hmac_disabled BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE api_keys ADD COLUMN sealed_key TEXT NOT NULL DEFAULT '';
