-- Topics: named groups of subscribers of an environment (a team, a
-- project's watchers), and who belongs to them. A subscription names the
-- subscriber by _id; identifier tells several subscriptions of one
-- subscriber to a topic apart ("" for the plain one).
CREATE TABLE topics (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    topic_key       TEXT NOT NULL,
    name            TEXT,
    data            TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX topics_env_key ON topics (environment_id, topic_key);

CREATE TABLE topic_subscriptions (
    id              TEXT PRIMARY KEY,
    environment_id  TEXT NOT NULL,
    topic_id        TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    subscriber_id   TEXT NOT NULL,
    identifier      TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
-- A topic's members in _id order: membership checks and batched fan-out.
CREATE UNIQUE INDEX topic_subscriptions_member ON topic_subscriptions (topic_id, subscriber_id, identifier);
CREATE INDEX topic_subscriptions_subscriber ON topic_subscriptions (subscriber_id, topic_id);
