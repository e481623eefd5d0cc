-- Delivery over e-mail, SMS, chat and push. A job keeps the integration it
-- delivers through and its delivery state (attempts on that integration,
-- integrations tried, targets done). A chat or push job delivers to several
-- targets (webhooks, integrations), one message each: messages are unique
-- per (job, target), no longer per job, so the table is rebuilt.
ALTER TABLE jobs ADD COLUMN integration_id TEXT;
ALTER TABLE jobs ADD COLUMN delivery TEXT;

CREATE TABLE messages_new (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    job_id          TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    workflow_id     TEXT NOT NULL,
    template_identifier TEXT NOT NULL,
    transaction_id  TEXT NOT NULL,
    channel         TEXT NOT NULL,
    provider_id     TEXT NOT NULL,
    content         TEXT NOT NULL,
    subject         TEXT,
    avatar          TEXT,
    cta             TEXT NOT NULL DEFAULT '{}',
    actor           TEXT,
    payload         TEXT NOT NULL DEFAULT '{}',
    data            TEXT,
    tags            TEXT,
    overrides       TEXT NOT NULL DEFAULT '{}',
    status          TEXT NOT NULL,
    read            BOOLEAN NOT NULL DEFAULT false,
    seen            BOOLEAN NOT NULL DEFAULT false,
    archived        BOOLEAN NOT NULL DEFAULT false,
    last_read_at    INTEGER,
    last_seen_at    INTEGER,
    deleted         BOOLEAN NOT NULL DEFAULT false,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    target          TEXT NOT NULL DEFAULT '',
    integration_id  TEXT,
    provider_message_id TEXT,
    error_text      TEXT,
    delivery        TEXT
);
INSERT INTO messages_new (id, organization_id, environment_id, notification_id, job_id, subscriber_id, workflow_id,
    template_identifier, transaction_id, channel, provider_id, content, subject, avatar, cta, actor, payload, data, tags,
    overrides, status, read, seen, archived, last_read_at, last_seen_at, deleted, created_at, updated_at)
SELECT id, organization_id, environment_id, notification_id, job_id, subscriber_id, workflow_id,
    template_identifier, transaction_id, channel, provider_id, content, subject, avatar, cta, actor, payload, data, tags,
    overrides, status, read, seen, archived, last_read_at, last_seen_at, deleted, created_at, updated_at FROM messages;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE UNIQUE INDEX messages_job_target ON messages (job_id, target);
CREATE INDEX messages_feed ON messages (subscriber_id, created_at DESC, id DESC) WHERE deleted = false AND channel = 'in_app';
CREATE INDEX messages_notification ON messages (notification_id);
CREATE INDEX messages_env_created ON messages (environment_id, created_at DESC, id DESC) WHERE deleted = false;
