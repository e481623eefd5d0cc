-- Per-subscriber counts of in-app messages by (read, seen), kept in the same
-- transactions that insert, mark and delete messages, so that a feed's exact
-- totalCount and the unseen count cost one row read however large the inbox.
CREATE TABLE inbox_counts (
    subscriber_id  TEXT COLLATE "C" PRIMARY KEY,
    environment_id TEXT NOT NULL,
    unread_unseen  BIGINT NOT NULL DEFAULT 0,
    unread_seen    BIGINT NOT NULL DEFAULT 0,
    read_unseen    BIGINT NOT NULL DEFAULT 0,
    read_seen      BIGINT NOT NULL DEFAULT 0
);
INSERT INTO inbox_counts (subscriber_id, environment_id, unread_unseen, unread_seen, read_unseen, read_seen)
SELECT subscriber_id, min(environment_id),
       sum(CASE WHEN NOT read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN NOT read AND seen THEN 1 ELSE 0 END),
       sum(CASE WHEN read AND NOT seen THEN 1 ELSE 0 END), sum(CASE WHEN read AND seen THEN 1 ELSE 0 END)
FROM messages WHERE channel = 'in_app' AND deleted = false GROUP BY subscriber_id;
