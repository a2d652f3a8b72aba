-- Token signing keys shared by every auth instance, and the refresh tokens of the login token pairs.

-- RSA keys that sign RS256 access tokens and OpenID Connect ID tokens. A key is published (JWKS) from its creation,
-- signs from activates_at until the next key activates, and stays published until the tokens it signed expired.
create table signing_keys (
  kid text primary key,
  algorithm text not null default 'RS256' check (algorithm = 'RS256'),
  -- the public JWK as served by /.well-known/jwks.json
  public_jwk jsonb not null,
  -- the private key (PKCS#8 DER), AES-256-GCM encrypted: 'v1.' iv '.' tag '.' ciphertext, base64url parts
  private_key_encrypted text not null,
  created_at timestamptz not null,
  -- one key per activation instant: instances rotating at once cannot both add a key for the same slot
  activates_at timestamptz not null constraint signing_keys_activates_at_key unique
);

-- Opaque refresh tokens: only their SHA-256 is stored. Every use rotates the token within its family; presenting a
-- used token again revokes the whole family.
create table refresh_tokens (
  id uuid primary key default gen_random_uuid(),
  family_id uuid not null,
  user_id uuid not null references users (id) on delete cascade,
  token_hash text not null constraint refresh_tokens_token_hash_key unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  revoked_at timestamptz
);

create index refresh_tokens_family_idx on refresh_tokens (family_id);
create index refresh_tokens_user_idx on refresh_tokens (user_id);
create index refresh_tokens_expires_at_idx on refresh_tokens (expires_at);
