-- Correlation by process: a process's command carries the stamp of the instance and step that asked, sent by the
-- relay as the `process` Kafka header; an event written by a handler of such a command carries the command's stamp
-- back, as the `process-answer` header. JSON text; the writer bounds it (512 characters: maxProcessStampLength in
-- @meridian/contracts). Null: none (every other event, and the rows of writers older than these columns, published
-- without the headers as before).
alter table outbox
  add column process_command text,
  add column process_answer text;
