-- Retention (docs/operations.md): the purge walks triggers, transactionId
-- reservations and in-app messages in the order they were created, a batch
-- at a time, through these indexes.
CREATE INDEX notifications_created ON notifications (created_at, id);
CREATE INDEX transactions_created ON transactions (created_at, environment_id, transaction_id);
CREATE INDEX messages_in_app_created ON messages (created_at) WHERE channel = 'in_app';
-- An in-app message outlives its trigger (inbox retention is longer than
-- activity retention): when the trigger is purged, the message keeps the
-- context keys the inbox filters on here (NULL: its notification's).
ALTER TABLE messages ADD COLUMN context_keys TEXT;
