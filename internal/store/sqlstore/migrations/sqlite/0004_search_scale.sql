-- Subscriber search at a million rows: PostgreSQL gets an index of e-mail
-- words and name statistics; SQLite searches substrings by scanning, and
-- needs nothing (same version number in both dialects).
SELECT 1;
