-- Address verification and change (issue 44, point 5).
-- * users.email_verified: whether the user proved the address is theirs (a link mailed to it was used). False for
--   every user until then, those made before this migration included; a change of the address makes it false again
--   until the new one is proved (an address change through its link proves it at once).
-- * email_verifications: the single-use tokens of those links, as SHA-256 only: `verify` proves the user's address as
--   it was when the link was made, `change` sets a new address (the one the link was mailed to). A newer link of the
--   same purpose supersedes the older ones; a use deletes it.
-- * security_mails may also be the notice to an account's address that a change of it was asked for.
alter table users add column email_verified boolean not null default false;

create table email_verifications (
  token_hash text primary key check (token_hash ~ '^[0-9a-f]{64}$'),
  user_id uuid not null references users (id) on delete cascade,
  -- the address the link was mailed to, and proves
  email text not null check (char_length(email) between 3 and 320),
  purpose text not null check (purpose in ('verify', 'change')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);

create index email_verifications_user_idx on email_verifications (user_id, purpose);
create index email_verifications_expires_idx on email_verifications (expires_at);

alter table security_mails drop constraint security_mails_template_check;
alter table security_mails add constraint security_mails_template_check
  check (template in ('password_reset', 'verify_address', 'password_changed', 'address_change_requested'));
