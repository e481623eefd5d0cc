-- Workflows, triggers, notifications, jobs (the work queue), execution details, messages.
CREATE TABLE workflows (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL REFERENCES environments (id),
    workflow_key    TEXT NOT NULL,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    tags            TEXT NOT NULL DEFAULT '[]',
    active          BOOLEAN NOT NULL,
    critical        BOOLEAN NOT NULL DEFAULT false,
    severity        TEXT NOT NULL DEFAULT 'none',
    preferences     TEXT NOT NULL DEFAULT '{}',
    payload_schema  TEXT,
    steps           TEXT NOT NULL DEFAULT '[]',
    deleted         BOOLEAN NOT NULL DEFAULT false,
    last_triggered_at INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX workflows_env_key ON workflows (environment_id, workflow_key) WHERE deleted = false;
CREATE INDEX workflows_env_created ON workflows (environment_id, created_at, id) WHERE deleted = false;

CREATE TABLE transactions (
    environment_id TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    workflow_id    TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (environment_id, transaction_id)
);

CREATE TABLE notifications (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    workflow_id     TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    transaction_id  TEXT NOT NULL,
    payload         TEXT NOT NULL DEFAULT '{}',
    overrides       TEXT NOT NULL DEFAULT '{}',
    actor           TEXT,
    recipient       TEXT,
    tags            TEXT NOT NULL DEFAULT '[]',
    channels        TEXT NOT NULL DEFAULT '[]',
    digested_notification_id TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX notifications_env_created ON notifications (environment_id, created_at, id);
CREATE INDEX notifications_env_transaction ON notifications (environment_id, transaction_id);
CREATE INDEX notifications_subscriber ON notifications (subscriber_id, created_at);

CREATE TABLE jobs (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    notification_id TEXT NOT NULL REFERENCES notifications (id),
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
    updated_at      INTEGER NOT NULL
);
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE status = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE status = 'running';
CREATE INDEX jobs_notification ON jobs (notification_id, step_index);
CREATE INDEX jobs_env_transaction ON jobs (environment_id, transaction_id);

CREATE TABLE execution_details (
    id              TEXT PRIMARY KEY,
    job_id          TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    status          TEXT NOT NULL,
    source          TEXT NOT NULL,
    detail          TEXT NOT NULL,
    is_retry        BOOLEAN NOT NULL DEFAULT false,
    is_test         BOOLEAN NOT NULL DEFAULT false,
    provider_id     TEXT,
    raw             TEXT,
    created_at      INTEGER NOT NULL
);
CREATE INDEX execution_details_notification ON execution_details (notification_id, created_at, id);

CREATE TABLE messages (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    job_id          TEXT NOT NULL UNIQUE,
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
    updated_at      INTEGER NOT NULL
);
CREATE INDEX messages_feed ON messages (subscriber_id, created_at DESC, id DESC) WHERE deleted = false AND channel = 'in_app';
CREATE INDEX messages_notification ON messages (notification_id);
