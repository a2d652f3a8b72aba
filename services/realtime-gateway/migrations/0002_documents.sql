-- Collaborative documents and their members (who may open and edit them on /collab). `version` counts the edits
-- applied: an edit names the version it was made on, and is applied with a compare-and-set on it, so concurrent
-- edits (from any instance) are serialized, never lost or applied twice.
create table documents (
  id uuid primary key default gen_random_uuid(),
  title text not null check (char_length(title) between 1 and 200),
  -- under the channel's 1 MB message limit (collab:init carries it whole)
  content text not null default '' check (char_length(content) <= 1000000),
  version integer not null default 0 check (version >= 0),
  -- the creator: always a member, never removed
  owner_id uuid not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table document_members (
  document_id uuid not null references documents (id) on delete cascade,
  user_id uuid not null,
  joined_at timestamptz not null default now(),
  primary key (document_id, user_id)
);

-- a user's documents
create index document_members_user_idx on document_members (user_id, document_id);

-- A document in a list (no content) with its members' ids, oldest membership first.
create view document_records as
  select d.id, d.title, d.version, d.owner_id, d.created_at, d.updated_at,
    array(
      select m.user_id::text from document_members m where m.document_id = d.id order by m.joined_at, m.user_id
    ) as members
  from documents d;

-- The same, once per member (member_id): a user's list filters on it.
create view document_records_by_member as
  select d.*, m.user_id as member_id
  from document_records d join document_members m on m.document_id = d.id;
