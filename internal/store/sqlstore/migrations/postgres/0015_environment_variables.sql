-- Environment variables: organization-wide keys ({{env.KEY}} in templates)
-- with one value per environment. A secret variable's values are sealed
-- with the server secret (secret rotation re-encrypts them).
CREATE TABLE environment_variables (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    var_key         TEXT NOT NULL,
    var_type        TEXT NOT NULL,
    is_secret       BOOLEAN NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX environment_variables_org_key ON environment_variables (organization_id, var_key);

CREATE TABLE environment_variable_values (
    variable_id    TEXT NOT NULL REFERENCES environment_variables (id) ON DELETE CASCADE,
    environment_id TEXT NOT NULL,
    value          TEXT NOT NULL,
    PRIMARY KEY (variable_id, environment_id)
);
-- What a step renders with: every value of one environment.
CREATE INDEX environment_variable_values_env ON environment_variable_values (environment_id);
