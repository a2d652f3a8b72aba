-- Every refund of a payment at the provider, by the provider's refund id (re_…), and the payment's chargeback.
-- Whoever records a refund first adds its amount to the payment's refunded_cents: Meridian's own refund paths with
-- the provider's answer (the saga's compensation, a late charge's refund, a return's lines), or the provider's
-- charge.refunded webhook (a refund made at the provider outside Meridian, or one of Meridian's whose answer was lost
-- and which is asked again under the same key later). The other finds it here and adds nothing, so a refund is
-- counted once whichever comes first.
create table payment_refunds (
  refund_id text primary key check (char_length(refund_id) between 1 and 255),
  payment_id uuid not null references payments (id),
  -- exact money: integer minor units (cents)
  amount_cents bigint not null check (amount_cents > 0),
  -- who recorded it first: meridian (its own call's answer) or provider (the provider's webhook told of it)
  recorded_by text not null check (recorded_by in ('meridian', 'provider')),
  created_at timestamptz not null default now()
);

create index payment_refunds_payment_id_idx on payment_refunds (payment_id);

-- the returns' refunds recorded before this table are known by their provider refund id (the saga's compensations
-- and late refunds kept none: their refunded_cents stands, and the webhook's comparison of amounts covers them)
insert into payment_refunds (refund_id, payment_id, amount_cents, recorded_by)
select provider_refund_id, payment_id, amount_cents, 'meridian' from return_refunds
on conflict (refund_id) do nothing;

-- A chargeback (the provider's charge.dispute.created): the payment is disputed from then on; one dispute per
-- payment is kept (the first), a provider dispute names one payment.
alter table payments add column disputed_at timestamptz;
alter table payments add column provider_dispute_id text
  check (char_length(provider_dispute_id) between 1 and 255);
alter table payments add column dispute_reason text check (char_length(dispute_reason) between 1 and 100);
create unique index payments_provider_dispute_id_key on payments (provider_dispute_id)
  where provider_dispute_id is not null;
