-- An exchange's steps reach its customer (exchange.requested, exchange.awaiting_goods, exchange.completed,
-- exchange.failed): four more notification types. Their events carry the customer, so these notifications are never
-- pending. No table changes for the exchange's own payment and shipment (their orderId is the exchange's id):
-- exchange.requested records that id in order_customers as its customer's, as order.placed records an order's.
-- Expand: the new check is added NOT VALID (no scan while the table is locked; every row passes it already, the
-- check it replaces being narrower) and validated by 0007, in a transaction of its own that blocks no writes.
alter table notifications drop constraint notifications_type_check;

alter table notifications add constraint notifications_type_check
  check (type in ('order_placed', 'payment_failed', 'shipment_created', 'shipment_delivered', 'return_requested',
    'return_received', 'return_completed', 'return_rejected', 'exchange_requested', 'exchange_awaiting_goods',
    'exchange_completed', 'exchange_failed', 'welcome')) not valid;
