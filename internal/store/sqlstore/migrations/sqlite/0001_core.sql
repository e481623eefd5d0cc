-- Core: tenancy, subscribers, integrations, idempotency keys.
-- Times are Unix milliseconds; booleans are 0/1.
CREATE TABLE organizations (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE members (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    email           TEXT NOT NULL,
    role            TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);

CREATE TABLE environments (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    name            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    UNIQUE (organization_id, name)
);

CREATE TABLE api_keys (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL REFERENCES environments (id),
    hash           TEXT NOT NULL UNIQUE,
    prefix         TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    revoked_at     INTEGER
);

CREATE TABLE subscribers (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL REFERENCES environments (id),
    subscriber_id   TEXT NOT NULL,
    first_name      TEXT,
    last_name       TEXT,
    email           TEXT,
    phone           TEXT,
    avatar          TEXT,
    locale          TEXT,
    timezone        TEXT,
    data            TEXT,
    channels        TEXT NOT NULL DEFAULT '[]',
    is_online       BOOLEAN,
    last_online_at  INTEGER,
    version         INTEGER NOT NULL DEFAULT 0,
    deleted         BOOLEAN NOT NULL DEFAULT false,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX subscribers_env_subscriber_id ON subscribers (environment_id, subscriber_id) WHERE deleted = false;
CREATE INDEX subscribers_env_id ON subscribers (environment_id, id) WHERE deleted = false;
CREATE INDEX subscribers_env_created ON subscribers (environment_id, created_at, id) WHERE deleted = false;
CREATE INDEX subscribers_env_updated ON subscribers (environment_id, updated_at, id) WHERE deleted = false;
CREATE INDEX subscribers_env_email ON subscribers (environment_id, email) WHERE deleted = false;

CREATE TABLE integrations (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL REFERENCES environments (id),
    provider_id     TEXT NOT NULL,
    channel         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    name            TEXT NOT NULL,
    identifier      TEXT NOT NULL,
    credentials     TEXT NOT NULL,
    configurations  TEXT NOT NULL,
    conditions      TEXT NOT NULL,
    active          BOOLEAN NOT NULL,
    is_primary      BOOLEAN NOT NULL,
    deleted         BOOLEAN NOT NULL DEFAULT false,
    deleted_at      INTEGER,
    deleted_by      TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX integrations_env_identifier ON integrations (environment_id, identifier) WHERE deleted = false;
CREATE INDEX integrations_env_provider ON integrations (environment_id, provider_id);
CREATE INDEX integrations_org ON integrations (organization_id);

CREATE TABLE idempotency_keys (
    environment_id TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    request_hash   TEXT NOT NULL,
    done           BOOLEAN NOT NULL DEFAULT false,
    status         INTEGER NOT NULL DEFAULT 0,
    body           BLOB,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (environment_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
