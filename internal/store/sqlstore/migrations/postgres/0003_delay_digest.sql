-- Delay and digest steps: jobs waiting until run_at, and open digest windows looked up by key.
CREATE INDEX jobs_delayed ON jobs (run_at) WHERE status = 'delayed';
CREATE INDEX jobs_digest_open ON jobs (environment_id, workflow_id, subscriber_id, step_id, digest_key) WHERE status = 'delayed';
CREATE INDEX jobs_digest_recent ON jobs (environment_id, workflow_id, subscriber_id, step_id, digest_key, created_at) WHERE type = 'digest';
