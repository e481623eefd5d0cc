-- Inbound provider delivery events (issue 29, part A). A provider's post is
-- authenticated, parsed and stored here in one statement before it is
-- answered; the recorder (internal/deliveryevents) then records each queued
-- event on its message: an execution detail, and for `delivered` the
-- message's delivered_at. An event's identity (event_key, per integration)
-- is unique, so a replay is recorded once. A recorded event keeps its row
-- (its identity) without its raw body; one that matches no message after
-- its attempts is deleted.
CREATE TABLE delivery_events (
    id                  TEXT PRIMARY KEY,
    organization_id     TEXT NOT NULL,
    environment_id      TEXT NOT NULL,
    integration_id      TEXT NOT NULL,
    provider_id         TEXT NOT NULL,
    event_key           TEXT NOT NULL,
    webhook_status      TEXT NOT NULL,
    message_id          TEXT NOT NULL,
    provider_message_id TEXT NOT NULL,
    occurred_at         BIGINT NOT NULL,
    detail              TEXT NOT NULL,
    raw                 TEXT,
    queued              BOOLEAN NOT NULL,
    attempts            INTEGER NOT NULL DEFAULT 0,
    run_at              BIGINT NOT NULL,
    received_at         BIGINT NOT NULL
);
CREATE UNIQUE INDEX delivery_events_key ON delivery_events (integration_id, event_key);
CREATE INDEX delivery_events_due ON delivery_events (run_at, id) WHERE queued = true;

-- Events find their message by the provider's id of the delivery.
CREATE INDEX messages_provider_message ON messages (provider_message_id) WHERE provider_message_id IS NOT NULL;
-- The provider's time of a recorded `delivered` event (deliveredAt).
ALTER TABLE messages ADD COLUMN delivered_at BIGINT;
-- The provider's status of a detail recorded from a delivery event.
ALTER TABLE execution_details ADD COLUMN webhook_status TEXT;
