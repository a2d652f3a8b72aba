-- Exchanges: lines of a shipped or delivered order sent back for other products. The exchange is the resource (its
-- status, its lines at the order's prices beside their replacements at the catalogue's, the price rise to charge or
-- the fall to refund in cents, the address and payment method it ships and charges with, copied from the order);
-- its process (@meridian/process, type `exchange`, key: the exchange's id) reserves, charges, receives, restocks,
-- refunds and ships. A new table: the release before reads nothing of it.
create table exchanges (
  id uuid primary key,
  order_id uuid not null references orders (id),
  customer_id uuid not null,
  status text not null default 'requested'
    check (status in ('requested', 'awaiting_goods', 'received', 'completed', 'failed')),
  items jsonb not null check (jsonb_typeof(items) = 'array'),
  charge_cents bigint not null check (charge_cents >= 0),
  refund_cents bigint not null check (refund_cents >= 0),
  payment_token text check (length(payment_token) <= 255),
  shipping_address jsonb not null,
  failure_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- an order's exchanges, newest first (and what of it is exchanged already)
create index exchanges_order_idx on exchanges (order_id, created_at desc, id);
