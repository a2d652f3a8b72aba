-- Chat rooms, their members (who may join the room on /chat) and their messages. Presence (who is online in a room)
-- is not here: it lives in Redis, shared by the instances (src/data/presence-store.ts).
create table chat_rooms (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(name) between 1 and 100),
  -- the creator: always a member, never removed
  owner_id uuid not null,
  created_at timestamptz not null default now()
);

create table chat_room_members (
  room_id uuid not null references chat_rooms (id) on delete cascade,
  user_id uuid not null,
  joined_at timestamptz not null default now(),
  primary key (room_id, user_id)
);

-- a user's rooms
create index chat_room_members_user_idx on chat_room_members (user_id, room_id);

create table chat_messages (
  id uuid primary key default gen_random_uuid(),
  room_id uuid not null references chat_rooms (id) on delete cascade,
  user_id uuid not null,
  -- the sender's name when they sent it (the channel's user, from their token)
  username text not null,
  text text not null check (char_length(text) between 1 and 5000),
  -- clock_timestamp: messages of one transaction-less burst still get distinct, increasing times
  created_at timestamptz not null default clock_timestamp()
);

-- a room's history, newest first (chat:history and GET .../messages)
create index chat_messages_room_idx on chat_messages (room_id, created_at desc, id);

-- A room as the API shows it: its members' ids, oldest membership first.
create view chat_room_records as
  select r.id, r.name, r.owner_id, r.created_at,
    array(
      select m.user_id::text from chat_room_members m where m.room_id = r.id order by m.joined_at, m.user_id
    ) as members
  from chat_rooms r;

-- The same, once per member (member_id): a user's list filters on it.
create view chat_room_records_by_member as
  select r.*, m.user_id as member_id
  from chat_room_records r join chat_room_members m on m.room_id = r.id;
