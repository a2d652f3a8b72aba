-- The audit trail of one service: every operator's and admin's action (a role, status or password set by an admin,
-- an API key made or revoked, a process retried or compensated, a return received or rejected, a delivery reported,
-- stock adjusted), with who (user:<id>, api-key:<id>, client:<id>, carrier:<name>), what, when, from where and the
-- request id. Appended in the transaction of the change itself, so no change is kept without its record. Append-only:
-- an update, a delete or a truncate is refused by the table itself, whoever asks (no route offers one either).
create table audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default clock_timestamp(),
  actor text not null check (length(actor) between 1 and 300),
  action text not null check (action ~ '^[a-z][a-z0-9_.-]{0,99}$'),
  target text not null check (length(target) between 1 and 300),
  detail jsonb not null default '{}'::jsonb check (jsonb_typeof(detail) = 'object'),
  address text check (length(address) <= 100),
  request_id text check (length(request_id) <= 200)
);
-- the newest first, filtered by action or by actor
create index audit_log_at_idx on audit_log (at desc, id desc);
create index audit_log_action_idx on audit_log (action, at desc);
create index audit_log_actor_idx on audit_log (actor, at desc);

create function audit_log_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception 'audit_log is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
end
$$;
create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_refuse_change();
create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_refuse_change();
