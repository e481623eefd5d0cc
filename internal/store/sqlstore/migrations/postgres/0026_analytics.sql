-- The dashboard's Analytics (sqlstore/analytics.go): an environment's
-- messages counted by UTC day and channel by an index-only scan of this
-- index (the few groups are hashed); and the jobs with a provider's event of
-- a given webhookStatus (`opened`), the few execution details recorded from
-- delivery events.
CREATE INDEX messages_analytics ON messages (environment_id, created_at, channel, status, delivered_at, job_id);
CREATE INDEX execution_details_webhook ON execution_details (environment_id, webhook_status, created_at, job_id)
    WHERE webhook_status IS NOT NULL;
