-- Topic and broadcast fan-out. A trigger to topics (or a broadcast) writes,
-- in its own transaction, one job of type 'fanout' that belongs to no
-- notification: its state (the topics, who is left out, the cursor in _id
-- order, the event) is the fanout column. Workers run it a batch of
-- recipients per transaction, writing their notifications and jobs and
-- moving the cursor in the same transaction (resumable, never twice).
-- SQLite cannot drop the foreign key to notifications: the table is rebuilt.
CREATE TABLE jobs_new (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    workflow_id     TEXT NOT NULL,
    transaction_id  TEXT NOT NULL,
    step_id         TEXT NOT NULL,
    step_index      INTEGER NOT NULL,
    type            TEXT NOT NULL,
    provider_id     TEXT NOT NULL,
    status          TEXT NOT NULL,
    run_at          INTEGER NOT NULL,
    lease_until     INTEGER,
    attempts        INTEGER NOT NULL DEFAULT 0,
    digest          TEXT,
    digest_key      TEXT,
    error           TEXT NOT NULL DEFAULT '',
    schedule_extensions_count INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    integration_id  TEXT,
    delivery        TEXT,
    fanout          TEXT
);
INSERT INTO jobs_new (id, organization_id, environment_id, notification_id, subscriber_id, workflow_id, transaction_id,
    step_id, step_index, type, provider_id, status, run_at, lease_until, attempts, digest, digest_key, error,
    schedule_extensions_count, created_at, updated_at, integration_id, delivery)
SELECT id, organization_id, environment_id, notification_id, subscriber_id, workflow_id, transaction_id,
    step_id, step_index, type, provider_id, status, run_at, lease_until, attempts, digest, digest_key, error,
    schedule_extensions_count, created_at, updated_at, integration_id, delivery FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE status = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE status = 'running';
CREATE INDEX jobs_notification ON jobs (notification_id, step_index);
CREATE INDEX jobs_env_transaction ON jobs (environment_id, transaction_id);
CREATE INDEX jobs_delayed ON jobs (run_at) WHERE status = 'delayed';
CREATE INDEX jobs_digest_open ON jobs (environment_id, workflow_id, subscriber_id, step_id, digest_key) WHERE status = 'delayed';
CREATE INDEX jobs_digest_recent ON jobs (environment_id, workflow_id, subscriber_id, step_id, digest_key, created_at) WHERE type = 'digest';
