-- Returns: lines of a shipped or delivered order sent back by its customer. The return is the resource (its status,
-- lines at the order's prices, the refund they add up to); its process (@meridian/process, type `return`, key: the
-- return's id) receives the goods, puts the stock back and refunds exactly these lines.
create table returns (
  id uuid primary key,
  order_id uuid not null references orders (id),
  customer_id uuid not null,
  status text not null default 'requested' check (status in ('requested', 'received', 'completed', 'rejected')),
  reason text not null,
  rejection_reason text,
  refund_cents bigint not null check (refund_cents >= 0),
  payment_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- an order's returns, newest first (and what of it is returned already)
create index returns_order_idx on returns (order_id, created_at desc, id);

create table return_items (
  return_id uuid not null references returns (id) on delete cascade,
  line integer not null,
  product_id uuid not null,
  name text not null,
  quantity integer not null check (quantity > 0),
  price_cents bigint not null check (price_cents >= 0),
  primary key (return_id, line)
);
