-- The webhook outbox (issue 29): a change that causes webhook events
-- writes an entry in its own transaction; the webhooks service turns it
-- into events and deletes it in one transaction. due_at is when a drain may
-- claim it: its creation, the end of a writer's hold (a held entry is made
-- into events by its writer right after the commit), or the end of a
-- drain's lease. organization_id is '' for entries of messages (each
-- message carries its own).
CREATE TABLE webhook_outbox (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    kind            TEXT NOT NULL,
    ref             TEXT NOT NULL,
    due_at          BIGINT NOT NULL,
    claims          INTEGER NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (due_at);
