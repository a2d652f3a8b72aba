-- API keys for server-to-server callers. The key itself is never stored: only its public prefix (the lookup) and the
-- SHA-256 of the whole key (keys are 256 random bits, so a fast hash is enough, unlike passwords).
create table api_keys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  prefix text not null constraint api_keys_prefix_key unique,
  key_hash text not null,
  scopes text[] not null default '{}',
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);

create index api_keys_user_id_idx on api_keys (user_id, created_at desc);
