-- Code-first workflows (Novu Framework apps, issue 28): a workflow synced
-- from an environment's bridge has origin 'bridge' ('' for one made through
-- the API or the dashboard); the environment keeps the bridge's URL.
ALTER TABLE workflows ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE environments ADD COLUMN bridge_url TEXT NOT NULL DEFAULT '';
