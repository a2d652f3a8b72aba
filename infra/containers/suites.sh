#!/usr/bin/env bash
# The suites of the tests' container path (./scripts/test), one after the other, on the one set of engine containers
# that packages/testkit/src/with-infra.ts started for all of them (each suite's global setup finds their endpoints in
# the environment): @meridian/db's, @meridian/events' and @meridian/service-kit's suites, then testkit's tests of the
# containers themselves and its engines' smoke tests. Every suite runs even when one before it failed; the status is
# the last failure's.
#   suites.sh [vitest argument...]   passed to the three workspaces' runs (./scripts/test: an --exclude for each
#                                    timing-sensitive file, which the load-check phase runs instead)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
report=(--reporter=default --reporter=json --outputFile.json=.turbo/containers/vitest-report.json)
result=0
for workspace in packages/db packages/events packages/service-kit; do
  (cd "$root/$workspace" && pnpm exec vitest run "$@" "${report[@]}") || result=$?
done
(cd "$root/packages/testkit" && pnpm exec vitest run test/containers.test.ts test/*.smoke.test.ts "${report[@]}") ||
  result=$?
exit $result
