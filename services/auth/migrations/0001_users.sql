-- The users directory. Emails are stored lower-cased, so the unique constraint is case-insensitive.
create table users (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(name) between 1 and 200),
  email text not null constraint users_email_key unique,
  password_hash text not null,
  role text not null default 'user' check (role in ('user', 'admin')),
  status text not null default 'active' check (status in ('active', 'inactive', 'suspended')),
  age integer check (age between 18 and 150),
  -- bumped on every change: the ETag, and the If-Match check of PATCH
  version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  search tsvector generated always as (to_tsvector('simple', name || ' ' || email)) stored
);

create index users_created_at_idx on users (created_at desc, id);
create index users_status_role_idx on users (status, role);
create index users_search_idx on users using gin (search);
