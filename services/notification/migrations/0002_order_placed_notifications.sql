-- The notification order.placed makes is named for what happened: the order was placed (`order_placed`, "Order
-- placed"), not confirmed — its payment comes after and may fail. Existing rows are renamed with their titles and
-- messages, so a user's list reads the same as the notifications made from now on.
alter table notifications drop constraint notifications_type_check;

update notifications
set type = 'order_placed',
    title = 'Order placed',
    message = regexp_replace(message, '^Your order (.*) is confirmed: ', 'Your order \1 was placed: ')
where type = 'order_confirmed';

alter table notifications add constraint notifications_type_check
  check (type in ('order_placed', 'payment_failed', 'shipment_created', 'shipment_delivered', 'welcome'));
