-- API keys are held to their scopes (the catalogue of @meridian/contracts' scopes.ts), and a new key names at least
-- one. A key made before with no scope at all was unlimited in practice, which no key may be now: it is revoked,
-- visibly (revoked_at, shown in its owner's list), so that its owner makes a new one naming what it is for. (0006 and
-- 0007 belong to changes of auth written at the same time.)
update api_keys set revoked_at = now() where cardinality(scopes) = 0 and revoked_at is null;
