-- What oidc-provider stores (sessions, interactions, grants, codes, tokens, device codes): one row per model and id.
-- The payload is the provider's own document; the columns beside it are what the adapter looks rows up by.
create table oidc_payloads (
  model text not null,
  id text not null,
  payload jsonb not null,
  grant_id text,
  user_code text,
  uid text,
  -- null: never expires (the provider gives every model a lifetime, so this is a safeguard)
  expires_at timestamptz,
  consumed_at timestamptz,
  primary key (model, id)
);

-- revokeByGrantId: every token of a grant goes at once (code reuse, refresh token reuse, revocation)
create index oidc_payloads_grant_id_idx on oidc_payloads (grant_id) where grant_id is not null;
-- findByUserCode (device flow) and findByUid (sessions); not unique: an expired row may still hold a code until
-- the cleanup removes it, and lookups skip expired rows
create index oidc_payloads_user_code_idx on oidc_payloads (model, user_code) where user_code is not null;
create index oidc_payloads_uid_idx on oidc_payloads (model, uid) where uid is not null;
-- the periodic removal of expired rows
create index oidc_payloads_expires_at_idx on oidc_payloads (expires_at) where expires_at is not null;
