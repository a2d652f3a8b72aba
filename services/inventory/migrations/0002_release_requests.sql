-- The orders whose stock the saga asked to give back (inventory.release_requested): one row per order, kept. A
-- reservation of such an order that arrives late (payment.processed, inventory.reservation_requested) is not made:
-- inventory.failed 'the order was cancelled'.
create table release_requests (
  order_id uuid primary key,
  -- the first request's reason
  reason text not null check (char_length(reason) <= 500),
  requested_at timestamptz not null default now()
);
