-- Translations: one JSON content per resource (a workflow or a layout, by
-- its client identifier) and locale, per environment. The organization's
-- default locale is the per-key fallback of {{t.key}} (en_US unless set).
CREATE TABLE translations (
    environment_id TEXT NOT NULL REFERENCES environments (id),
    resource_type  TEXT NOT NULL,
    resource_id    TEXT NOT NULL,
    locale         TEXT NOT NULL,
    content        TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (environment_id, resource_type, resource_id, locale)
);
CREATE INDEX translations_env_locale ON translations (environment_id, locale);

ALTER TABLE organizations ADD COLUMN default_locale TEXT NOT NULL DEFAULT 'en_US';
