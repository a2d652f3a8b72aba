-- The returns whose lines were put back in stock (inventory.restock_requested): one row per return, kept. Inserting
-- it (on conflict do nothing) is what decides that a return's stock moves: once, however often the restock is asked
-- for (the return's process asking again, a redelivery).
create table restocks (
  return_id uuid primary key,
  order_id uuid not null,
  -- the lines put back, [{productId, quantity}] in product id order: what inventory.restocked answers, every time
  items jsonb not null,
  -- the lines asked for (merged per product): those naming no product of the catalogue were not put back
  asked jsonb not null,
  created_at timestamptz not null default now()
);

create index restocks_order_idx on restocks (order_id);
