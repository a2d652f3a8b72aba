-- The inbox of idempotent consumers: an event id processed by a consumer group is recorded in the same transaction as
-- its effect, so a redelivered event is skipped. Rows older than 24 hours are removed.
create table inbox (
  consumer_group varchar(255) not null,
  event_id varchar(255) not null,
  topic varchar(255) not null,
  processed_at timestamptz not null default now(),
  primary key (consumer_group, event_id)
);

create index inbox_processed_at_idx on inbox (processed_at);
