-- Messages looked up by transaction (GET /v1/messages?transactionId=,
-- DELETE /v1/messages/transaction/{transactionId}) without scanning the
-- environment's messages; and a topic subscription's own name and workflow
-- preferences (PATCH /v2/topics/{topicKey}/subscriptions/{identifier}):
-- preferences is a JSON array of {workflowId, enabled, condition?}, NULL for none.
CREATE INDEX messages_env_transaction ON messages (environment_id, transaction_id) WHERE deleted = false;
ALTER TABLE topic_subscriptions ADD COLUMN name TEXT;
ALTER TABLE topic_subscriptions ADD COLUMN preferences TEXT;
