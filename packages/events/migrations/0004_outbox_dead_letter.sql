-- A dead letter written through the outbox: work a service gave up on (a mail that could not be sent) recorded as its
-- event, in the transaction that gave it up, and published by the relay to the event type's `{type}.dlt` with the
-- failure headers a consumer's dead letter carries (error-message, dead-lettered-at, consumer-group, retry-count,
-- original-topic), so the operators' dead-letter pages list it and a replay sends it to `{type}`. Null: an ordinary
-- event, published to its type's topic as before.
alter table outbox add column dead_letter jsonb;
