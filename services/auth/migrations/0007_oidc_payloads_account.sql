-- The user each row of the OpenID provider belongs to (sessions, grants, codes, tokens, interactions), so that taking
-- a user's rights away (password change, suspension, deletion) ends their provider sessions and grants in the same
-- transaction. Rows of no user (client credentials, replay detection) have none.
alter table oidc_payloads add column account_id text;

update oidc_payloads
set account_id = coalesce(
  payload ->> 'accountId',
  payload #>> '{session,accountId}',
  payload #>> '{result,login,accountId}'
);

create index oidc_payloads_account_id_idx on oidc_payloads (account_id) where account_id is not null;
