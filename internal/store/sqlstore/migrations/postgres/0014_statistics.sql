-- No statistics for the wide columns that no query compares by value (the
-- rendered content, JSON documents, provider answers): ANALYZE, which Herald
-- runs itself where autovacuum is off (maintain.go), spent most of its time
-- sorting their samples — half of a messages ANALYZE, two thirds of a
-- notifications one. Filters on payload and tags are expressions, which
-- column statistics do not serve.
ALTER TABLE messages ALTER COLUMN content SET STATISTICS 0, ALTER COLUMN subject SET STATISTICS 0,
  ALTER COLUMN avatar SET STATISTICS 0, ALTER COLUMN cta SET STATISTICS 0, ALTER COLUMN actor SET STATISTICS 0,
  ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN data SET STATISTICS 0, ALTER COLUMN overrides SET STATISTICS 0,
  ALTER COLUMN delivery SET STATISTICS 0, ALTER COLUMN error_text SET STATISTICS 0,
  ALTER COLUMN provider_message_id SET STATISTICS 0;
ALTER TABLE notifications ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN overrides SET STATISTICS 0,
  ALTER COLUMN actor SET STATISTICS 0, ALTER COLUMN recipient SET STATISTICS 0, ALTER COLUMN channels SET STATISTICS 0;
ALTER TABLE execution_details ALTER COLUMN detail SET STATISTICS 0, ALTER COLUMN raw SET STATISTICS 0;
ALTER TABLE jobs ALTER COLUMN digest SET STATISTICS 0, ALTER COLUMN error SET STATISTICS 0,
  ALTER COLUMN delivery SET STATISTICS 0, ALTER COLUMN fanout SET STATISTICS 0;
