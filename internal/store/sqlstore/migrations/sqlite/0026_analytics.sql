-- The dashboard's Analytics (sqlstore/analytics.go): an environment's
-- messages counted by UTC day and channel from this index alone, read in
-- the order of its groups (the day, then the channel) so that no row is
-- sorted; and the jobs with a provider's event of a given webhookStatus
-- (`opened`), the few execution details recorded from delivery events.
CREATE INDEX messages_analytics ON messages (environment_id, (created_at / 86400000), channel, status, delivered_at, job_id, created_at);
CREATE INDEX execution_details_webhook ON execution_details (environment_id, webhook_status, created_at, job_id)
    WHERE webhook_status IS NOT NULL;
