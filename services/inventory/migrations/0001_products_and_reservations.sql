-- The catalogue, its stock and the reservations held for paid orders. Stock is never oversold: available and
-- reserved can never go below zero (check constraints), and every change locks the product rows it touches.
create table products (
  id uuid primary key default gen_random_uuid(),
  sku text not null constraint products_sku_key unique check (char_length(sku) between 1 and 64),
  name text not null check (char_length(name) between 1 and 200),
  description text check (char_length(description) <= 2000),
  -- exact money: integer minor units (cents)
  price_cents bigint not null check (price_cents >= 0),
  -- what can be reserved now
  available integer not null check (available >= 0),
  -- held for paid orders until shipped (leaves) or released (back to available)
  reserved integer not null default 0 check (reserved >= 0),
  active boolean not null default true,
  -- bumped on every change, stock included: the ETag, and the If-Match check of PATCH
  version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  search tsvector generated always as (
    to_tsvector('simple', name || ' ' || sku || ' ' || coalesce(description, ''))
  ) stored
);

create index products_created_at_idx on products (created_at desc, id);
create index products_name_idx on products (name, id);
create index products_price_idx on products (price_cents, id);
create index products_search_idx on products using gin (search);

-- Every change of a product's stock, as an audit: adjustments, reservations, releases and shipments.
create table stock_movements (
  id bigint generated always as identity primary key,
  product_id uuid not null references products (id) on delete cascade,
  delta_available integer not null,
  delta_reserved integer not null,
  reason text not null check (char_length(reason) between 1 and 300),
  order_id uuid,
  created_at timestamptz not null default now(),
  check (delta_available <> 0 or delta_reserved <> 0)
);

create index stock_movements_product_idx on stock_movements (product_id, id);
create index stock_movements_order_idx on stock_movements (order_id) where order_id is not null;

-- One reservation per order at most (order_id unique): a redelivered payment never reserves twice.
create table reservations (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null constraint reservations_order_id_key unique,
  status text not null default 'held' check (status in ('held', 'released', 'shipped')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table reservation_lines (
  reservation_id uuid not null references reservations (id) on delete cascade,
  product_id uuid not null references products (id),
  quantity integer not null check (quantity > 0),
  primary key (reservation_id, product_id)
);
