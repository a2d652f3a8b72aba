-- The refunds of an amount under a key (payment.refund_requested with `amount` and `refundKey`, 1.2.0): one row per
-- key, written in the consumer's transaction with the refunded payment's refunded_cents, so a refund asked again (the
-- process's next attempt, or the same event redelivered) is answered from it and never made twice. The key is the
-- asking process's (a return's is `return-<returnId>`); payment knows no process. The provider's key is
-- `refund-<refundKey>` (with `-<n>` after n declines), the same a return's refund had before, so a refund an earlier
-- release made and whose answer was lost is replayed by the provider, not made again, and payment_refunds counts it
-- once. Expand: return_refunds and return_refund_declines stay for the release before this one, which writes them
-- while both run; the contract release drops them.
create table keyed_refunds (
  refund_key text primary key check (char_length(refund_key) between 1 and 255),
  order_id text not null check (char_length(order_id) between 1 and 255),
  payment_id uuid not null references payments (id),
  -- exact money: integer minor units (cents), what the provider refunded
  amount_cents bigint not null check (amount_cents > 0),
  -- the provider's refund (re_…)
  provider_refund_id text not null unique check (char_length(provider_refund_id) between 1 and 255),
  created_at timestamptz not null default now()
);

create index keyed_refunds_order_id_idx on keyed_refunds (order_id);

-- The provider's declines of a keyed refund, counted per key: the attempt after a known decline asks under a new
-- provider key (the provider replays a key's declined answer for 24 hours).
create table keyed_refund_declines (
  refund_key text primary key check (char_length(refund_key) between 1 and 255),
  declines bigint not null check (declines > 0),
  updated_at timestamptz not null default now()
);

-- the returns' refunds and declines recorded before, under the key their return asks with now
insert into keyed_refunds (refund_key, order_id, payment_id, amount_cents, provider_refund_id, created_at)
select 'return-' || return_id, order_id, payment_id, amount_cents, provider_refund_id, created_at from return_refunds
on conflict do nothing;

insert into keyed_refund_declines (refund_key, declines, updated_at)
select 'return-' || return_id, declines, updated_at from return_refund_declines
on conflict do nothing;
