-- E-mail as a channel, and the user's choice of channels per notification type.
-- * notifications.mail_data: what the notification's mail is rendered from (its template is named as its type),
--   kept with the notification so that a pending one (its order's customer not known yet) is mailed once resolved.
-- * notifications.in_app: false when the user turned the type's in-app channel off; such a notification is still
--   stored (its event made it: a redelivery must find it) but never listed, read or marked.
-- * notification_preferences: the channels a user turned off (a missing row: every channel on).
-- * user_addresses: each user's address, from auth's events (highest version wins) and order.placed's customerEmail
--   (version 0, replaced by any user event); a removed user keeps a tombstone without an address.
-- * email_deliveries: one row per notification to mail, written in the transaction that gives the notification its
--   user; the sender takes due rows, sends, and marks them sent, or retries with backoff until dead.
alter table notifications add column mail_data jsonb;
alter table notifications add column in_app boolean not null default true;

create table notification_preferences (
  user_id uuid not null,
  type text not null check (char_length(type) between 1 and 100),
  in_app boolean not null default true,
  realtime boolean not null default true,
  email boolean not null default true,
  updated_at timestamptz not null default now(),
  primary key (user_id, type)
);

create table user_addresses (
  user_id uuid primary key,
  -- null once the user is removed
  email text check (email is null or char_length(email) between 3 and 320),
  -- auth's version of the user that told this address (0: order.placed's customerEmail)
  version integer not null check (version >= 0),
  removed_at timestamptz,
  updated_at timestamptz not null default now(),
  check (email is not null or removed_at is not null)
);

create table email_deliveries (
  notification_id uuid primary key references notifications (id) on delete cascade,
  user_id uuid not null,
  status text not null default 'pending' check (status in ('pending', 'sent', 'dead')),
  -- sends tried so far (counted when a sender takes the row, so a sender that dies mid-send counts too)
  attempts integer not null default 0 check (attempts >= 0),
  -- when a sender may take it next: now for a new row, later after a failure, or after a taker's lease
  next_attempt_at timestamptz not null default now(),
  -- the last failure: an SMTP error's code and message, never credentials or the mail's content
  last_error text check (last_error is null or char_length(last_error) <= 1000),
  message_id text check (message_id is null or char_length(message_id) <= 255),
  created_at timestamptz not null default now(),
  sent_at timestamptz
);

-- what a sender round takes: pending rows by due time
create index email_deliveries_due_idx on email_deliveries (next_attempt_at) where status = 'pending';
-- a removed user's pending mails
create index email_deliveries_user_idx on email_deliveries (user_id) where status = 'pending';
