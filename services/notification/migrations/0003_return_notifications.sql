-- A return's steps reach its customer (return.requested, return.received, return.completed, return.rejected): four
-- more notification types. Their events carry the customer, so these notifications are never pending.
alter table notifications drop constraint notifications_type_check;

alter table notifications add constraint notifications_type_check
  check (type in ('order_placed', 'payment_failed', 'shipment_created', 'shipment_delivered', 'return_requested',
    'return_received', 'return_completed', 'return_rejected', 'welcome'));
