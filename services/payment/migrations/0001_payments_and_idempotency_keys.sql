-- Payments charged at the provider, and the Idempotency-Key records of POST /payments.
-- A card number is never stored: a payment keeps the card's brand and last four digits only.
create table payments (
  id uuid primary key default gen_random_uuid(),
  order_id text not null check (char_length(order_id) between 1 and 255),
  -- who paid: the principal's subject for POST /payments, null for the payment step of order.placed
  payer_id text,
  -- exact money: integer minor units (cents)
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null default 'usd' check (currency ~ '^[a-z]{3}$'),
  status text not null check (status in ('succeeded', 'failed', 'refunded')),
  provider_charge_id text,
  brand text,
  last4 text check (last4 ~ '^[0-9]{4}$'),
  failure_reason text check (char_length(failure_reason) <= 500),
  refunded_cents bigint not null default 0 check (refunded_cents >= 0 and refunded_cents <= amount_cents),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- one payment per provider charge: a replayed charge (same provider key) is never recorded twice
create unique index payments_provider_charge_id_key on payments (provider_charge_id)
  where provider_charge_id is not null;
create index payments_order_id_idx on payments (order_id, created_at);

-- Idempotency-Key (IETF draft, Stripe's storage rules): one row per (caller, key). Inserting the 'running' row is the
-- lock; the outcome (2xx or 4xx) is stored with it and replayed; a 5xx outcome removes the row.
create table idempotency_keys (
  scope text not null,
  key text not null check (char_length(key) between 1 and 255),
  -- keyed hash of the request body (canonical JSON): the same key with another body is refused
  request_hash text not null,
  status text not null check (status in ('running', 'done')),
  response_status integer,
  response_body jsonb,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  constraint idempotency_keys_scope_key_key unique (scope, key),
  check (status = 'running' or (response_status is not null and response_body is not null))
);

create index idempotency_keys_expires_at_idx on idempotency_keys (expires_at);
