-- PostgreSQL's 0014 turns off column statistics that SQLite does not keep
-- (it gathers none unless asked): nothing to do here, the number is kept so
-- that a schema version means the same in both stores.
SELECT 1;
