-- Inbox state (v2): when a message was first seen and archived, until when
-- it is snoozed, and its workflow's severity. The inbox counts gain the
-- state and the tags beside (read, seen): one row per subscriber, (archived,
-- snoozed, severity) — state = archived + 2·snoozed + 4·severity (none 0,
-- low 1, medium 2, high 3) — and tag set (the messages' tags column, '[]'
-- for none), each with the messages of its four (read, seen) buckets, so
-- that every filter over those dimensions is a sum of counters.
ALTER TABLE messages ADD COLUMN first_seen_at BIGINT;
ALTER TABLE messages ADD COLUMN archived_at BIGINT;
ALTER TABLE messages ADD COLUMN snoozed_until BIGINT;
ALTER TABLE messages ADD COLUMN severity TEXT NOT NULL DEFAULT 'none';
UPDATE messages SET first_seen_at = last_seen_at WHERE seen;
UPDATE messages SET archived_at = updated_at WHERE archived;
UPDATE messages SET severity = (SELECT w.severity FROM workflows w WHERE w.id = messages.workflow_id)
WHERE channel = 'in_app' AND workflow_id IN (SELECT id FROM workflows WHERE severity IN ('low', 'medium', 'high'));
-- Snoozes that are due: the workers' pass over all, and a subscriber's own
-- before its inbox is read.
CREATE INDEX messages_snoozed ON messages (snoozed_until) WHERE snoozed_until IS NOT NULL AND deleted = false;
CREATE INDEX messages_snoozed_subscriber ON messages (subscriber_id, snoozed_until)
    WHERE snoozed_until IS NOT NULL AND deleted = false;

DROP TABLE inbox_counts;
CREATE TABLE inbox_counts (
    subscriber_id  TEXT COLLATE "C" NOT NULL,
    state          SMALLINT NOT NULL,
    tags           TEXT NOT NULL,
    environment_id TEXT NOT NULL,
    unread_unseen  BIGINT NOT NULL DEFAULT 0,
    unread_seen    BIGINT NOT NULL DEFAULT 0,
    read_unseen    BIGINT NOT NULL DEFAULT 0,
    read_seen      BIGINT NOT NULL DEFAULT 0
);
-- A tag set may be longer than an index row can hold (16 tags of 64
-- four-byte characters): the key holds its digest.
CREATE UNIQUE INDEX inbox_counts_key ON inbox_counts (subscriber_id, state, md5(tags));
INSERT INTO inbox_counts (subscriber_id, state, tags, environment_id, unread_unseen, unread_seen, read_unseen, read_seen)
SELECT subscriber_id,
       CASE WHEN archived THEN 1 ELSE 0 END + CASE WHEN snoozed_until IS NOT NULL THEN 2 ELSE 0 END
         + CASE severity WHEN 'low' THEN 4 WHEN 'medium' THEN 8 WHEN 'high' THEN 12 ELSE 0 END AS state,
       coalesce(tags, '[]') AS t, min(environment_id),
       sum(CASE WHEN NOT read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN NOT read AND seen THEN 1 ELSE 0 END),
       sum(CASE WHEN read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN read AND seen THEN 1 ELSE 0 END)
FROM messages WHERE channel = 'in_app' AND deleted = false GROUP BY subscriber_id, state, t;
