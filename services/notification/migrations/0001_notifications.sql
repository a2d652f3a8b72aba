-- Users' notifications, each made from one domain event (source_event_id unique: a redelivered event, even one the
-- inbox has forgotten, never makes a second), and the orders' customers as order.placed told them, so that the events
-- that carry only an order id (payment.failed, shipment.*) reach the order's customer.
create table notifications (
  id uuid primary key default gen_random_uuid(),
  -- the recipient; null while pending: an order's event came before that order's order.placed said whose it is
  user_id uuid,
  -- the order it tells of (null for a welcome): how a pending notification finds its user
  order_id text check (order_id is null or char_length(order_id) between 1 and 255),
  type text not null
    check (type in ('order_confirmed', 'payment_failed', 'shipment_created', 'shipment_delivered', 'welcome')),
  title text not null check (char_length(title) between 1 and 200),
  message text not null check (char_length(message) between 1 and 1000),
  -- when what it tells of happened: the time of its event
  created_at timestamptz not null default now(),
  -- when its user first marked it read; null while unread
  read_at timestamptz,
  -- the list's unread filter (an equality filter needs a column)
  unread boolean not null generated always as (read_at is null) stored,
  -- the id of the event that made it
  source_event_id text not null constraint notifications_source_event_id_key unique
    check (char_length(source_event_id) between 1 and 255),
  -- a pending notification is an order's, and nobody has read it
  check (user_id is not null or (order_id is not null and read_at is null))
);

-- a user's list, newest first; and the same for one read state (unread=true|false)
create index notifications_user_created_idx on notifications (user_id, created_at desc, id);
create index notifications_user_unread_idx on notifications (user_id, unread, created_at desc, id);
-- the pending notifications of an order, resolved when its order.placed arrives
create index notifications_pending_order_idx on notifications (order_id) where user_id is null;

-- order.placed's customer of each order: who payment.failed and shipment.* of that order are for
create table order_customers (
  order_id text primary key check (char_length(order_id) between 1 and 255),
  customer_id uuid not null,
  recorded_at timestamptz not null default now()
);
