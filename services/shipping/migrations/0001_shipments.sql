-- The shipments of reserved orders. One per order at most (order_id unique): a redelivered inventory.reserved or a
-- retried shipment.requested never creates a second one. A shipment is created, then delivered (final).
create table shipments (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null constraint shipments_order_id_key unique,
  -- the order's customer, who may read it; null when the event did not carry it (then only admins read it)
  customer_id uuid,
  status text not null default 'created' check (status in ('created', 'delivered')),
  carrier text not null check (char_length(carrier) between 1 and 100),
  tracking_number text not null constraint shipments_tracking_number_key unique
    check (char_length(tracking_number) between 1 and 100),
  -- {street, city, zip} as the event carried it; null when it carried none
  shipping_address jsonb check (shipping_address is null or jsonb_typeof(shipping_address) = 'object'),
  -- [{productId, quantity}] as reserved
  items jsonb not null default '[]' check (jsonb_typeof(items) = 'array'),
  created_at timestamptz not null default now(),
  delivered_at timestamptz,
  -- bumped on every change
  version integer not null default 1,
  -- delivered exactly when it has a delivery time
  check ((status = 'delivered') = (delivered_at is not null))
);

create index shipments_created_at_idx on shipments (created_at desc, id);
create index shipments_customer_idx on shipments (customer_id, created_at desc, id) where customer_id is not null;
create index shipments_status_idx on shipments (status, created_at desc, id);
