-- Security mails are kept MAIL_RETENTION_DAYS after they are finished, then removed by the sender's rounds.
-- * security_mails.finished_at: when the mail was sent or given up (dead); null exactly while it is pending. Rows
--   finished before this migration take their sent_at or, dead, the end of their last lease (next_attempt_at).
-- * an index of the finished rows by that time: what a round's removal reads, a few rows at a time.
alter table security_mails add column finished_at timestamptz;
update security_mails set finished_at = coalesce(sent_at, next_attempt_at) where status <> 'pending';
alter table security_mails add constraint security_mails_finished_check
  check ((status = 'pending') = (finished_at is null));
create index security_mails_finished_idx on security_mails (finished_at) where status <> 'pending';
