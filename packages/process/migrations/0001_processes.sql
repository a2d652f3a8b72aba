-- The instances of every long-running process a service declares (@meridian/process), one row per (type, key), and
-- their step log. A decision changes its instance, appends its log lines and its commands' outbox rows in one
-- transaction; the deadline index is the clock's query; the others serve the operators' lists.
create table process_instances (
  type text not null check (type ~ '^[a-z][a-z0-9_]{0,39}$'),
  key text not null check (length(key) between 1 and 100),
  state text not null,
  -- the step awaited now (null: none), its attempt, and when it times out (null: no deadline)
  step text,
  attempt integer not null default 1 check (attempt >= 1),
  deadline timestamptz,
  compensation text not null default 'none' check (compensation in ('none', 'running', 'done', 'escalated')),
  failed_step text,
  failure_reason text,
  -- why operators must act, until the instance moves on (a step answers, an operator retries or compensates)
  escalation text,
  escalated boolean generated always as (escalation is not null) stored,
  -- the process's own fields (the ids its steps answered with, …), as its definition persists them
  data jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (type, key)
);

create index process_instances_deadline_idx on process_instances (deadline) where deadline is not null;
create index process_instances_type_state_idx on process_instances (type, state, created_at desc, key);
create index process_instances_created_idx on process_instances (created_at desc, type, key);
create index process_instances_attention_idx on process_instances (created_at desc, type, key)
  where escalated or compensation <> 'none';

-- What happened to which step of which instance, when, on which event: appended, never changed.
create table process_steps (
  id bigserial primary key,
  type text not null,
  key text not null,
  step text not null,
  outcome text not null,
  attempt integer,
  event_type text,
  event_id text,
  detail text,
  at timestamptz not null default now(),
  foreign key (type, key) references process_instances (type, key) on delete cascade
);
create index process_steps_instance_idx on process_steps (type, key, id);
