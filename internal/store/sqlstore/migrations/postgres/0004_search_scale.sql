-- Subscriber search at a million rows.
--
-- E-mail searches for a whole or nearly whole address: the trigram index
-- must intersect the posting lists of every trigram of the searched text, and
-- those of a domain (".co", "com") hold most rows. The words of an address
-- (runs of ASCII letters and digits) that the searched text encloses on both
-- sides are words of every address containing it, and usually of few others;
-- the store narrows such searches with this index and checks the substring
-- on the rows found.
CREATE INDEX subscribers_email_words ON subscribers
    USING gin (regexp_split_to_array(email, '[^A-Za-z0-9]+')) WHERE deleted = false;

-- Row estimates for name substrings. The trigram index on the name is partial,
-- and the planner reads no statistics from partial indexes, so it guessed a
-- few hundred rows for any name and sorted every match of a common one
-- instead of walking the _id index until a page is full. A substring's
-- estimate comes from matching it against the histogram: 500 buckets (not
-- 100) make a name held by 1% of subscribers show up reliably.
CREATE STATISTICS subscribers_name_expr ON ((coalesce(first_name, '') || ' ' || coalesce(last_name, ''))) FROM subscribers;
ALTER STATISTICS subscribers_name_expr SET STATISTICS 500;
