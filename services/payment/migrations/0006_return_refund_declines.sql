-- The refunds of returns the provider declined, counted per return. Stripe replays a key's answer for 24 hours, a
-- declined refund included, so the attempt after a known decline asks under a new key (`refund-return-<returnId>-<n>`,
-- n the declines counted); an attempt whose answer was lost counted nothing and keeps the key it had, so a refund the
-- provider made is replayed, never made twice. Written in the consumer's transaction with payment.refund_failed.
create table return_refund_declines (
  return_id text primary key check (char_length(return_id) between 1 and 255),
  declines integer not null check (declines > 0),
  updated_at timestamptz not null default now()
);
