-- Core: tenancy, subscribers, integrations, idempotency keys.
-- Times are Unix milliseconds. Identifiers sort bytewise (COLLATE "C"), as cursors need.
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

CREATE TABLE organizations (
    id         TEXT COLLATE "C" PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE members (
    id              TEXT COLLATE "C" PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    email           TEXT NOT NULL,
    role            TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);

CREATE TABLE environments (
    id              TEXT COLLATE "C" PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    name            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    UNIQUE (organization_id, name)
);

CREATE TABLE api_keys (
    id             TEXT COLLATE "C" PRIMARY KEY,
    environment_id TEXT COLLATE "C" NOT NULL REFERENCES environments (id),
    hash           TEXT NOT NULL UNIQUE,
    prefix         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    revoked_at     BIGINT
);

CREATE TABLE subscribers (
    id              TEXT COLLATE "C" PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL,
    environment_id  TEXT COLLATE "C" NOT NULL REFERENCES environments (id),
    subscriber_id   TEXT COLLATE "C" NOT NULL,
    first_name      TEXT,
    last_name       TEXT,
    email           TEXT COLLATE "C",
    phone           TEXT COLLATE "C",
    avatar          TEXT,
    locale          TEXT,
    timezone        TEXT,
    data            TEXT,
    channels        TEXT NOT NULL DEFAULT '[]',
    is_online       BOOLEAN,
    last_online_at  BIGINT,
    version         BIGINT NOT NULL DEFAULT 0,
    deleted         BOOLEAN NOT NULL DEFAULT false,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX subscribers_env_subscriber_id ON subscribers (environment_id, subscriber_id) WHERE deleted = false;
CREATE INDEX subscribers_env_id ON subscribers (environment_id, id) WHERE deleted = false;
CREATE INDEX subscribers_env_created ON subscribers (environment_id, created_at, id) WHERE deleted = false;
CREATE INDEX subscribers_env_updated ON subscribers (environment_id, updated_at, id) WHERE deleted = false;
CREATE INDEX subscribers_env_email ON subscribers (environment_id, email) WHERE deleted = false;
-- Case-sensitive substring search (LIKE '%…%') through trigram indexes.
CREATE INDEX subscribers_email_trgm ON subscribers USING gin (email public.gin_trgm_ops) WHERE deleted = false;
CREATE INDEX subscribers_phone_trgm ON subscribers USING gin (phone public.gin_trgm_ops) WHERE deleted = false;
CREATE INDEX subscribers_name_trgm ON subscribers
    USING gin ((coalesce(first_name, '') || ' ' || coalesce(last_name, '')) public.gin_trgm_ops) WHERE deleted = false;

CREATE TABLE integrations (
    id              TEXT COLLATE "C" PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL,
    environment_id  TEXT COLLATE "C" NOT NULL REFERENCES environments (id),
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
    deleted_at      BIGINT,
    deleted_by      TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX integrations_env_identifier ON integrations (environment_id, identifier) WHERE deleted = false;
CREATE INDEX integrations_env_provider ON integrations (environment_id, provider_id);
CREATE INDEX integrations_org ON integrations (organization_id);

CREATE TABLE idempotency_keys (
    environment_id TEXT COLLATE "C" NOT NULL,
    idem_key       TEXT NOT NULL,
    request_hash   TEXT NOT NULL,
    done           BOOLEAN NOT NULL DEFAULT false,
    status         INTEGER NOT NULL DEFAULT 0,
    body           BYTEA,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (environment_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
