-- The order saga moves onto the process module (@meridian/process): its instances become process_instances of type
-- `order` (key: the order's id; the steps' ids in `data`) and its log process_steps, moved here with what they hold.
-- `sagas` and `saga_steps` stay as read-only views of the same rows, for the operators' saga list, the order's links
-- and anyone's queries; the expression indexes let `order_id = …` use an index through the views.
-- The process tables are migrated before this folder (src/migrations.ts).
insert into process_instances
  (type, key, state, step, attempt, deadline, compensation, failed_step, failure_reason, escalation, data,
   created_at, updated_at)
select 'order', order_id::text, state, step, attempt, deadline, compensation, failed_step, failure_reason,
  case when compensation = 'escalated' then 'escalated before the move to the process module' end,
  jsonb_strip_nulls(jsonb_build_object(
    'paymentId', payment_id, 'reservationId', reservation_id, 'shipmentId', shipment_id)),
  created_at, updated_at
from sagas;

insert into process_steps (type, key, step, outcome, attempt, event_type, event_id, detail, at)
select 'order', order_id::text, step, outcome, attempt, event_type, event_id, detail, at
from saga_steps order by id;

drop table saga_steps;
drop table sagas;

create index process_instances_order_idx on process_instances ((key::uuid)) where type = 'order';
create index process_steps_order_idx on process_steps ((key::uuid), id) where type = 'order';

create view sagas as
select key::uuid as order_id, state, step, attempt, deadline, compensation, failed_step, failure_reason,
  data ->> 'paymentId' as payment_id, data ->> 'reservationId' as reservation_id,
  data ->> 'shipmentId' as shipment_id, created_at, updated_at
from process_instances where type = 'order';

create view saga_steps as
select id, key::uuid as order_id, step, outcome, attempt, event_type, event_id, detail, at
from process_steps where type = 'order';
