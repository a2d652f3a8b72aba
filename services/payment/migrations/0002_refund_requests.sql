-- The orders whose refund the saga requested (payment.refund_requested): one row per order, kept. A charge of such an
-- order that arrives late (order.placed, payment.requested) is not made: payment.failed 'the order was cancelled'.
create table refund_requests (
  order_id text primary key check (char_length(order_id) between 1 and 255),
  -- the first request's reason
  reason text not null check (char_length(reason) <= 500),
  requested_at timestamptz not null default now()
);

-- the orders refunded before requests were recorded (on order.cancelled / order.failed) count as requested
insert into refund_requests (order_id, reason)
select distinct on (order_id) order_id, 'refunded before refund requests were recorded'
from payments where status = 'refunded'
order by order_id
on conflict (order_id) do nothing;
