-- Step results: what a step produced that later steps' conditions and
-- templates read as steps.<stepId> (an HTTP request's response body, a
-- throttle's count, a delay's duration), as JSON.
ALTER TABLE jobs ADD COLUMN output TEXT;

-- Throttle windows: one per (environment, subscriber, workflow, step,
-- throttle key group), opened by the first execution it counts.
CREATE TABLE throttle_windows (
    environment_id  TEXT NOT NULL,
    subscriber_id   TEXT NOT NULL,
    workflow_id     TEXT NOT NULL,
    step_id         TEXT NOT NULL,
    throttle_key    TEXT NOT NULL,
    window_start    INTEGER NOT NULL,
    window_end      INTEGER NOT NULL,
    execution_count INTEGER NOT NULL,
    PRIMARY KEY (environment_id, subscriber_id, workflow_id, step_id, throttle_key)
);
-- Maintain deletes the windows that have closed.
CREATE INDEX throttle_windows_end ON throttle_windows (window_end);
