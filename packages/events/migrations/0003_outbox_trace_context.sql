-- The W3C trace context active when an event was appended, sent by the relay as the `traceparent` and `tracestate`
-- Kafka headers so the consumers continue the trace. Null: appended outside any trace, or by a writer older than
-- these columns; such rows are published without the headers, as before.
alter table outbox
  add column trace_parent varchar(512),
  add column trace_state varchar(512);
