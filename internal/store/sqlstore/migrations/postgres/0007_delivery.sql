-- Delivery over e-mail, SMS, chat and push. A job keeps the integration it
-- delivers through and its delivery state (attempts on that integration,
-- integrations tried, targets done). A chat or push job delivers to several
-- targets (webhooks, integrations), one message each: messages are unique
-- per (job, target), no longer per job.
ALTER TABLE jobs ADD COLUMN integration_id TEXT;
ALTER TABLE jobs ADD COLUMN delivery TEXT;

ALTER TABLE messages ADD COLUMN target TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN integration_id TEXT;
ALTER TABLE messages ADD COLUMN provider_message_id TEXT;
ALTER TABLE messages ADD COLUMN error_text TEXT;
ALTER TABLE messages ADD COLUMN delivery TEXT;
ALTER TABLE messages DROP CONSTRAINT messages_job_id_key;
CREATE UNIQUE INDEX messages_job_target ON messages (job_id, target);
CREATE INDEX messages_env_created ON messages (environment_id, created_at DESC, id DESC) WHERE deleted = false;
