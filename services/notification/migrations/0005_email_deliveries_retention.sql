-- Mail rows are kept MAIL_RETENTION_DAYS after they are finished, then removed by the sender's rounds (the
-- notification itself stays).
-- * email_deliveries.finished_at: when the mail was sent or given up (dead); null exactly while it is pending (a
--   replayed dead letter makes it pending again). Rows finished before this migration take their sent_at or, dead,
--   their next_attempt_at (the end of their last lease, or when a removed user's mail was written).
-- * an index of the finished rows by that time: what a round's removal reads, a few rows at a time.
alter table email_deliveries add column finished_at timestamptz;
update email_deliveries set finished_at = coalesce(sent_at, next_attempt_at) where status <> 'pending';
alter table email_deliveries add constraint email_deliveries_finished_check
  check ((status = 'pending') = (finished_at is null));
create index email_deliveries_finished_idx on email_deliveries (finished_at) where status <> 'pending';
