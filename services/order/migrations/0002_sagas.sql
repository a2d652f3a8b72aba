-- The order saga's process manager: one instance per order (its state, the step it waits for and until when, its
-- compensations, the ids the steps answered with) and its step log. The states, steps and compensation states are
-- those of @meridian/contracts (sagas.ts); domain/saga.ts moves them.
create table sagas (
  order_id uuid primary key references orders (id) on delete cascade,
  state text not null default 'created' check (
    state in ('created', 'payment_processed', 'inventory_reserved', 'shipped', 'failed', 'cancelled')
  ),
  -- the step awaited now (null: none), its attempt, and when it times out (null: no deadline)
  step text check (step in ('payment', 'inventory', 'shipment', 'release', 'refund')),
  attempt integer not null default 1 check (attempt >= 1),
  deadline timestamptz,
  compensation text not null default 'none' check (compensation in ('none', 'running', 'done', 'escalated')),
  failed_step text,
  failure_reason text,
  payment_id text,
  reservation_id text,
  shipment_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- the timer's query: instances whose awaited step is due
create index sagas_deadline_idx on sagas (deadline) where deadline is not null;
-- the operators' list: by state or compensation, newest first
create index sagas_state_idx on sagas (state, created_at desc, order_id);
create index sagas_compensation_idx on sagas (compensation, created_at desc, order_id) where compensation <> 'none';
create index sagas_created_idx on sagas (created_at desc, order_id);

-- What happened to which step, when, on which event: appended, never changed.
create table saga_steps (
  id bigserial primary key,
  order_id uuid not null references sagas (order_id) on delete cascade,
  step text not null,
  outcome text not null,
  attempt integer,
  event_type text,
  event_id text,
  detail text,
  at timestamptz not null default now()
);
create index saga_steps_order_idx on saga_steps (order_id, id);
