-- The provider's webhook events received (POST /api/v1/payments/webhooks/stripe): one row per event id, inserted
-- before the event is applied, in the same transaction, so an event the provider delivers again (it retries until it
-- gets a 2xx, and may deliver twice) is acknowledged and applied once. Unknown types are kept too: acknowledged once.
create table provider_events (
  event_id text primary key check (char_length(event_id) between 1 and 255),
  type text not null check (char_length(type) between 1 and 255),
  -- the PaymentIntent the event is about, when it is about one (pi_…)
  payment_intent text check (char_length(payment_intent) between 1 and 255),
  -- what applying it did: settled, ignored, recorded
  outcome text not null,
  received_at timestamptz not null default now()
);

create index provider_events_payment_intent_idx on provider_events (payment_intent) where payment_intent is not null;
