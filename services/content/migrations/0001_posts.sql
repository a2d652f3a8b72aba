-- Posts, and the users who write them as auth's events describe them (a projection: auth is the authority; content
-- never writes a user except from auth's word).
create table users (
  id uuid primary key,
  name text not null,
  email text not null,
  role text not null,
  status text not null,
  -- auth's version of the user (user.registered is 1; user.profile_changed carries it): an older event is skipped.
  -- 0: seeded from the claims of the user's own token before their user.registered arrived (any event replaces it)
  version integer not null check (version >= 0),
  -- user.removed: kept as a tombstone so that a late event cannot bring the user back; their posts are deleted
  removed_at timestamptz,
  updated_at timestamptz not null default now()
);

create table posts (
  id uuid primary key default gen_random_uuid(),
  author_id uuid not null references users (id),
  title text not null check (char_length(title) between 1 and 200),
  content text not null check (char_length(content) between 1 and 50000),
  created_at timestamptz not null default now()
);

-- the feed, newest first (keyset pagination on (created_at, id)), and each author's posts the same way
create index posts_created_idx on posts (created_at desc, id desc);
create index posts_author_created_idx on posts (author_id, created_at desc, id desc);
