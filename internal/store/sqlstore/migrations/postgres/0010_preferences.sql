-- Subscriber preferences: the channels a subscriber turned on or off,
-- globally (workflow_id '') or for one workflow (its _id). channels is a
-- JSON object of only the channels the subscriber set, e.g. {"email":false}.
-- Rows are keyed by the subscriber's _id: a claimed batch of jobs reads the
-- preferences of its (subscriber, workflow) pairs and their globals through
-- the unique index in one statement.
CREATE TABLE subscriber_preferences (
    id              TEXT PRIMARY KEY,
    environment_id  TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    workflow_id     TEXT NOT NULL DEFAULT '',
    channels        TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX subscriber_preferences_key ON subscriber_preferences (subscriber_id, workflow_id);
