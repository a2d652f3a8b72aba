-- The refunds of returns (payment.refund_requested with cause 'return'): one row per return, written in the consumer's
-- transaction with the refunded payment's refunded_cents, so a return asked again (the process's next attempt, or the
-- same event redelivered) is answered from it and never refunded twice. The provider's key is the return's own
-- (`refund-return-<returnId>`), so a refund made at the provider whose transaction rolled back is replayed, not made
-- again.
create table return_refunds (
  return_id text primary key check (char_length(return_id) between 1 and 255),
  order_id text not null check (char_length(order_id) between 1 and 255),
  payment_id uuid not null references payments (id),
  -- exact money: integer minor units (cents), what the provider refunded
  amount_cents bigint not null check (amount_cents > 0),
  -- the provider's refund (re_…): one row per provider refund
  provider_refund_id text not null unique check (char_length(provider_refund_id) between 1 and 255),
  created_at timestamptz not null default now()
);

create index return_refunds_order_id_idx on return_refunds (order_id);
