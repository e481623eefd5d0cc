-- E-mail layouts: per environment, at most one default.
CREATE TABLE layouts (
    id              TEXT COLLATE "C" PRIMARY KEY,
    organization_id TEXT NOT NULL,
    environment_id  TEXT NOT NULL REFERENCES environments (id),
    layout_key      TEXT NOT NULL,
    name            TEXT NOT NULL,
    is_default      BOOLEAN NOT NULL DEFAULT false,
    translations    BOOLEAN NOT NULL DEFAULT false,
    control_values  TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX layouts_env_key ON layouts (environment_id, layout_key);
CREATE UNIQUE INDEX layouts_env_default ON layouts (environment_id) WHERE is_default;
CREATE INDEX layouts_env_created ON layouts (environment_id, created_at, id);
