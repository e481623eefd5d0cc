-- The raw SQL baseline of a fan-out run: the rows Herald wrote for it
-- (notifications, jobs, execution details, messages) written again in bulk,
-- one INSERT … SELECT per table, with new ids. Run after the fan-out, on its
-- database; the run's own rows are then removed again.
CREATE TEMP TABLE b_notifications AS SELECT * FROM notifications;
CREATE TEMP TABLE b_jobs AS SELECT * FROM jobs WHERE type <> 'fanout';
CREATE TEMP TABLE b_details AS SELECT * FROM execution_details;
CREATE TEMP TABLE b_messages AS SELECT * FROM messages;
UPDATE b_notifications SET id = id || 'b';
UPDATE b_jobs SET id = id || 'b', notification_id = notification_id || 'b';
UPDATE b_details SET id = id || 'b', job_id = job_id || 'b', notification_id = notification_id || 'b';
UPDATE b_messages SET id = id || 'b', job_id = job_id || 'b', notification_id = notification_id || 'b';
