-- POST /payments pays an order, never an id: payment keeps the orders it heard of (order.placed, payment.requested)
-- with who placed each, what is due and where its payment stands, so that it decides "exists, belongs to the caller,
-- awaits payment, amount due" from its own data, under the order's advisory lock that the saga's charge and refund
-- take too. One row per order; no card data.
create table orders (
  order_id text primary key check (char_length(order_id) between 1 and 255),
  customer_id text not null check (char_length(customer_id) between 1 and 255),
  -- what is due: integer minor units (cents)
  amount_cents bigint not null check (amount_cents >= 0),
  currency text not null default 'usd' check (currency ~ '^[a-z]{3}$'),
  -- the order.placed content without its payment token: what payment.processed carries
  order_data jsonb not null,
  -- 'pending' until the order step answers; 'payment_failed' once payment.failed went out (the customer may pay it);
  -- 'paid' once payment.processed went out for the order's charge
  payment_state text not null default 'pending' check (payment_state in ('pending', 'payment_failed', 'paid')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- the orders the order step charged before this table: known from their charge attempts
insert into orders (order_id, customer_id, amount_cents, currency, order_data, payment_state)
select distinct on (attempt.order_id) attempt.order_id, attempt.order_data ->> 'customerId', attempt.amount_cents,
  attempt.currency, attempt.order_data,
  case
    when exists (select 1 from payments where order_id = attempt.order_id and status <> 'failed') then 'paid'
    when exists (select 1 from payments where order_id = attempt.order_id and payer_id is null) then 'payment_failed'
    else 'pending'
  end
from charge_attempts attempt
where attempt.order_data ->> 'customerId' is not null
order by attempt.order_id, attempt.created_at;

-- One successful charge per order, whoever made it (the order step, POST /payments, the reconciler): the order's
-- charge. A second one cannot be recorded as such; the code refunds a charge the index turns away.
alter table payments add column order_charge boolean not null default false;
-- before this rule an order could hold several charges: the first stays the order's charge
update payments set order_charge = true
where id in (
  select distinct on (order_id) id from payments
  where status in ('succeeded', 'refunded')
  order by order_id, created_at, id
);
create unique index payments_one_charge_per_order_key on payments (order_id) where order_charge;

-- POST /payments records its charges as attempts too (with the payer), so that a charge whose outcome the provider
-- did not tell in time is settled by the reconciler: it pays the order or is refunded, it never sits beside it. A
-- settled attempt names the payment its charge was recorded as: the same request again answers with it.
alter table charge_attempts add column payer_id text check (char_length(payer_id) between 1 and 255);
alter table charge_attempts add column payment_id uuid references payments (id);

-- The provider's Idempotency-Key of a client's key: made when the key is first taken (or taken over once expired),
-- kept while the same request runs again (a retry after a 5xx, which leaves the row 'released'), so a new request
-- never replays an old charge at the provider and a retry never charges twice. The keys taken before keep the key
-- they were sent with (a hash of caller and key).
alter table idempotency_keys add column provider_key text;
update idempotency_keys
set provider_key = 'pay-' || encode(sha256(convert_to(scope || E'\n' || key, 'UTF8')), 'hex');
alter table idempotency_keys alter column provider_key set not null;
alter table idempotency_keys drop constraint idempotency_keys_status_check;
alter table idempotency_keys add constraint idempotency_keys_status_check
  check (status in ('running', 'done', 'released'));
alter table idempotency_keys drop constraint idempotency_keys_check;
alter table idempotency_keys add constraint idempotency_keys_outcome_check
  check (status <> 'done' or (response_status is not null and response_body is not null));
