-- A payment that waits for the customer's 3-D Secure authentication (payment.action_required): the saga keeps the
-- provider's page in its data, and the order's `_links.authenticate` reads it through the `sagas` view (a column
-- added at its end: the view's other columns are unchanged).
create or replace view sagas as
select key::uuid as order_id, state, step, attempt, deadline, compensation, failed_step, failure_reason,
  data ->> 'paymentId' as payment_id, data ->> 'reservationId' as reservation_id,
  data ->> 'shipmentId' as shipment_id, created_at, updated_at,
  data ->> 'authenticateUrl' as authenticate_url
from process_instances where type = 'order';

-- and the order's status while it waits: payment_action_required
alter table orders drop constraint orders_status_check;
alter table orders add constraint orders_status_check check (
  status in (
    'placed', 'payment_action_required', 'payment_failed', 'paid', 'reserved', 'shipped', 'delivered', 'cancelling',
    'cancelled', 'failed'
  )
);
