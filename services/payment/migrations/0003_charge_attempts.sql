-- The charges of the order step (order.placed, payment.requested) whose outcome may be unknown: one row per provider
-- Idempotency-Key (`order-<orderId>`), written through the pool right before the provider is called, so that it
-- survives the rollback of the consumer's transaction when the call times out. The call's definitive outcome
-- (succeeded, declined or refused) marks it settled in that transaction; a row left pending is replayed at the
-- provider with the same key and parameters by the charge reconciler (src/domain/reconciler.ts), which records the
-- outcome, refunds a late charge of an order whose refund was requested, and settles it.
-- No card data: the provider token only (tok_…).
create table charge_attempts (
  idempotency_key text primary key check (char_length(idempotency_key) between 1 and 255),
  order_id text not null check (char_length(order_id) between 1 and 255),
  -- exactly what the provider was sent: integer minor units (cents), the currency and the provider token
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  token text not null check (char_length(token) between 1 and 255),
  -- the order.placed content without its payment token: what payment.processed carries when the reconciler answers
  order_data jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'settled')),
  created_at timestamptz not null default now(),
  -- the last time the reconciler asked the provider for the outcome; null until it did
  checked_at timestamptz
);

-- the reconciler's round: the pending attempts, oldest first
create index charge_attempts_pending_idx on charge_attempts (created_at) where status = 'pending';
create index charge_attempts_order_id_idx on charge_attempts (order_id);
