-- Environments created, changed and deleted through the API: the parent an
-- environment was made from (production's is development), its colour, and
-- when it was deleted (a deleted environment keeps its rows, unreachable:
-- its keys are revoked, its integrations removed, its name freed).
ALTER TABLE environments ADD COLUMN parent_id TEXT;
ALTER TABLE environments ADD COLUMN color TEXT NOT NULL DEFAULT '';
ALTER TABLE environments ADD COLUMN deleted_at INTEGER;
UPDATE environments SET parent_id = (SELECT d.id FROM environments d
    WHERE d.organization_id = environments.organization_id AND d.name = 'development')
    WHERE name = 'production';
