-- Outbound webhooks (issue 29, part B): an environment's endpoints, the
-- events sent to them, and one row per attempt to deliver an event to an
-- endpoint. An endpoint's secrets are sealed with the server secret
-- (secret rotation re-encrypts them); previous_secret is the secret a
-- rotation replaced, which still signs until previous_until.
CREATE TABLE webhook_endpoints (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    url             TEXT NOT NULL,
    event_types     TEXT NOT NULL,
    description     TEXT NOT NULL,
    disabled        BOOLEAN NOT NULL,
    secret          TEXT NOT NULL,
    previous_secret TEXT NOT NULL DEFAULT '',
    previous_until  INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_env ON webhook_endpoints (environment_id, created_at, id);

-- An event as sent: body is the signed JSON, the same on every attempt.
CREATE TABLE webhook_events (
    id             TEXT PRIMARY KEY,
    environment_id TEXT NOT NULL,
    event_type     TEXT NOT NULL,
    body           TEXT NOT NULL,
    created_at     INTEGER NOT NULL
);
CREATE INDEX webhook_events_created ON webhook_events (created_at);

-- One attempt of an event at an endpoint. due_at is when a sender may
-- claim it: the attempt's time while it waits, the end of its lease once
-- claimed (an expired lease lets another sender claim it again: at least
-- once), NULL once answered or canceled. claims guards the answer of a
-- sender that lost its lease.
CREATE TABLE webhook_attempts (
    id              TEXT PRIMARY KEY,
    endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    event_type      TEXT NOT NULL,
    attempt         INTEGER NOT NULL,
    due_at          INTEGER,
    claims          INTEGER NOT NULL DEFAULT 0,
    status_code     INTEGER,
    success         BOOLEAN NOT NULL DEFAULT false,
    error           TEXT,
    attempted_at    INTEGER,
    next_attempt_at INTEGER
);
CREATE INDEX webhook_attempts_due ON webhook_attempts (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);
