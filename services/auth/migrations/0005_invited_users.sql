-- Invited users: created by an admin without a password, they cannot sign in until an admin sets one (which makes
-- them active). Only an invited user may lack a password hash.
alter table users alter column password_hash drop not null;

-- 0001's inline check, named by PostgreSQL
alter table users drop constraint users_status_check;
alter table users add constraint users_status_check
  check (status in ('active', 'inactive', 'suspended', 'invited'));

alter table users add constraint users_password_unless_invited_check
  check (password_hash is not null or status = 'invited');
