-- Credential revocations, written in the transaction of the change that takes a user's rights away (role, status,
-- password, deletion) and delivered to Redis (key + pub/sub, which every service follows) at least once: right after
-- the commit, and by a round until delivered. A crash or a Redis outage between the commit and the delivery only
-- delays it.
create table credential_revocations (
  id bigint generated always as identity primary key,
  -- no foreign key: the revocation of a deleted user must outlive the user's row
  user_id uuid not null,
  -- credentials issued before this instant no longer count (ms precision, as the Redis record carries)
  revoked_before timestamptz not null,
  -- when everything it voids has expired anyway: kept (and delivered) until then, deleted after
  until timestamptz not null,
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);

-- the round's work: what is still to be delivered, oldest first
create index credential_revocations_undelivered_idx on credential_revocations (id) where delivered_at is null;
-- a new token's issue time is checked against the user's latest revocation
create index credential_revocations_user_idx on credential_revocations (user_id, revoked_before desc);
-- the removal of lapsed revocations
create index credential_revocations_until_idx on credential_revocations (until);
