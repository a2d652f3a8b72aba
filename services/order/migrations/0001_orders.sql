-- Orders and their items. Money is exact: integer minor units (cents). The status is one of the order statuses of
-- @meridian/contracts (orders.ts); the order saga moves it on.
create table orders (
  id uuid primary key default gen_random_uuid(),
  customer_id uuid not null,
  status text not null default 'placed' check (
    status in (
      'placed', 'payment_failed', 'paid', 'reserved', 'shipped', 'delivered', 'cancelling', 'cancelled', 'failed'
    )
  ),
  -- computed by the service from the catalogue prices, never taken from the client
  total_cents bigint not null check (total_cents >= 0),
  -- {street, city, zip}
  shipping_address jsonb not null,
  -- the payment provider's token for the saga's charge; never card data
  payment_token text check (char_length(payment_token) between 1 and 200),
  -- bumped on every change
  version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- a customer's orders, newest first (GET /users/{userId}/orders)
create index orders_customer_created_idx on orders (customer_id, created_at desc, id);
create index orders_customer_total_idx on orders (customer_id, total_cents, id);

-- The lines of an order, in the order the client sent them; name and price as the catalogue had them then.
create table order_items (
  order_id uuid not null references orders (id) on delete cascade,
  line integer not null check (line >= 0),
  product_id uuid not null,
  name text not null,
  quantity integer not null check (quantity > 0),
  price_cents bigint not null check (price_cents >= 0),
  primary key (order_id, line)
);
