-- Topic and broadcast fan-out. A trigger to topics (or a broadcast) writes,
-- in its own transaction, one job of type 'fanout' that belongs to no
-- notification: its state (the topics, who is left out, the cursor in _id
-- order, the event) is the fanout column. Workers run it a batch of
-- recipients per transaction, writing their notifications and jobs and
-- moving the cursor in the same transaction (resumable, never twice).
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_notification_id_fkey;
ALTER TABLE jobs ADD COLUMN fanout TEXT;
