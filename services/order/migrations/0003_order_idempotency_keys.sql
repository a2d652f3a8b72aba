-- The Idempotency-Key a client placed an order with, kept with the order for as long as the order is kept: a retry
-- with the same key (the first answer lost, a gateway's 504) finds this order instead of placing a second one. The
-- key is the customer's: unique per customer, so two customers may use the same one; the unique index decides which
-- of two concurrent requests places the order. The request is kept only as its fingerprint (an HMAC of the body).
alter table orders
  add column idempotency_key text check (char_length(idempotency_key) between 1 and 255),
  add column request_hash text,
  add constraint orders_idempotency_key_hashed check ((idempotency_key is null) = (request_hash is null));

create unique index orders_customer_idempotency_key_idx on orders (customer_id, idempotency_key)
  where idempotency_key is not null;
