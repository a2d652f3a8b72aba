-- The transactional outbox (spec: Outbox record). A business write and its event row commit or roll back together;
-- the relay publishes rows in id order and then deletes them, or marks them published (removed after 7 days).
create table outbox (
  id bigint generated always as identity primary key,
  event_type varchar(255) not null,
  aggregate_id varchar(255) not null,
  payload jsonb not null,
  created_at timestamptz not null default now(),
  published boolean not null default false,
  published_at timestamptz
);

-- the relay's query: the oldest unpublished rows
create index outbox_unpublished_idx on outbox (id) where not published;
