-- Contexts: typed entities of an environment (a tenant, a workspace) that
-- triggers name as {type: id}, and templates read as context.<type>.*.
CREATE TABLE contexts (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL,
    ctx_type        TEXT NOT NULL,
    ctx_id          TEXT NOT NULL,
    data            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX contexts_env_key ON contexts (environment_id, ctx_type, ctx_id);

-- A notification keeps the contexts of its trigger as they were resolved
-- (a JSON object {type: {id, data}}; NULL when none) and their keys, sorted
-- and joined ("project:x,tenant:acme"; '' when none), which the inbox
-- lists filter on with contextKeys.
ALTER TABLE notifications ADD COLUMN contexts TEXT;
ALTER TABLE notifications ADD COLUMN context_keys TEXT NOT NULL DEFAULT '';
