-- A return is bound to the carrier its goods go back with (named in RETURNS_CARRIER_KEYS as name=key): only that
-- carrier's key may report it received. Who did report it is kept: `carrier:<name>`, `user:<subject>` or
-- `api-key:<id>` (an admin's credential). Both columns are new and nullable: the code before them reads neither.
alter table returns
  add column carrier text check (carrier ~ '^[a-z0-9][a-z0-9-]{0,39}$'),
  add column received_by text check (length(received_by) <= 300);
