-- A charge of the order step whose card asks the customer to authenticate it first (3-D Secure): its attempt waits
-- as `authenticating` with the provider's payment (pi_…), the page the customer is sent to and the deadline after
-- which the payment service cancels it. The reconciler's rounds leave it (its outcome is the customer's, not lost);
-- the saga's asking again (payment.requested) and the provider's webhook read it back and settle it.
alter table charge_attempts drop constraint charge_attempts_status_check;
alter table charge_attempts add constraint charge_attempts_status_check
  check (status in ('pending', 'authenticating', 'settled'));
alter table charge_attempts
  add column intent_id text check (char_length(intent_id) between 1 and 255),
  add column authenticate_url text check (char_length(authenticate_url) between 1 and 2000),
  add column authentication_expires_at timestamptz,
  add constraint charge_attempts_authenticating_check
    check (status <> 'authenticating' or (intent_id is not null and authentication_expires_at is not null));

-- a webhook finds the attempt of the provider's payment it is about
create unique index charge_attempts_intent_id_idx on charge_attempts (intent_id) where intent_id is not null;
-- the reconciler's round: the payments still waiting past their deadline, to cancel
create index charge_attempts_authenticating_idx on charge_attempts (authentication_expires_at)
  where status = 'authenticating';
