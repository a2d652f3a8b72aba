#!/bin/sh
# As the redis image: redis-server without a configuration file accepts clients from other hosts (protected mode off,
# the container's network is the boundary); any other command runs as given.
set -eu
if [ "${1:-}" = redis-server ] && [ "${2:-}" = "${2#/}" ]; then
  shift
  set -- redis-server --protected-mode no "$@"
fi
exec "$@"
