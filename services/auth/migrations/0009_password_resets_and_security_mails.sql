-- Password reset (issue 44, point 4) and the security mails auth sends itself (a token never rides in an event).
-- * password_resets: one live reset per user at most (a new request deletes the older ones); the token is stored as
--   its SHA-256 only, and a use deletes it (single use), as does any change of the user's password.
-- * security_mails: an outbox of mails written in the transaction of what they tell (a reset asked for, a password
--   changed); the sender round takes due rows (`for update skip locked`), sends them and marks them sent, or retries
--   with backoff until dead. What a link holds (the raw token) is in sealed_data, encrypted under
--   SIGNING_KEY_ENCRYPTION_SECRET, and erased once the mail is sent or dead.
create table password_resets (
  -- hex SHA-256 of the token (32 random bytes, base64url) the mail's link carries
  token_hash text primary key check (token_hash ~ '^[0-9a-f]{64}$'),
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);

-- a new request, a use and a password change delete the user's resets
create index password_resets_user_idx on password_resets (user_id);
-- the sender round removes expired ones
create index password_resets_expires_idx on password_resets (expires_at);

create table security_mails (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  template text not null check (template in ('password_reset', 'verify_address', 'password_changed')),
  -- the address as it was when the mail was asked for
  recipient text not null check (char_length(recipient) between 3 and 320),
  -- the template's data that is no secret
  data jsonb not null default '{}',
  -- the rest (a link with a token), encrypted (AES-256-GCM, the row's id authenticated); null once sent or dead
  sealed_data text check (sealed_data is null or char_length(sealed_data) <= 8000),
  status text not null default 'pending' check (status in ('pending', 'sent', 'dead')),
  -- sends tried so far (counted when a sender takes the row)
  attempts integer not null default 0 check (attempts >= 0),
  -- when a sender may take it next: now for a new row, later after a failure or while a sender holds it
  next_attempt_at timestamptz not null default now(),
  -- the last failure: an SMTP error's code and message, never the mail's content
  last_error text check (last_error is null or char_length(last_error) <= 1000),
  message_id text check (message_id is null or char_length(message_id) <= 255),
  created_at timestamptz not null default now(),
  sent_at timestamptz
);

create index security_mails_due_idx on security_mails (next_attempt_at) where status = 'pending';
create index security_mails_user_idx on security_mails (user_id);
