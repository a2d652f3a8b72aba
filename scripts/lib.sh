# Shared by scripts/*: finds Node and the pinned pnpm, installs dependencies when the lockfile changed.
# Sourced, not run.
set -euo pipefail

MERIDIAN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MERIDIAN_CACHE_DIR="${MERIDIAN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/meridian}"
export MERIDIAN_CACHE_DIR

say() { printf '\033[1m[meridian]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[meridian]\033[0m %s\n' "$*" >&2; exit 1; }

# Node.js >= 22.12 on PATH is used as it is. An older one (Node 20 reached its end of life in April 2026) gets the
# Node 24 LTS pinned in .node-version, as the npm registry's `node` package (a real Node binary), installed once into
# the cache folder with the machine's npm and put first on PATH for this script and everything it starts.
ensure_node() {
  local accepts='const [major, minor] = process.versions.node.split(".").map(Number)
    process.exit(major > 22 || (major === 22 && minor >= 12) ? 0 : 1)'
  if command -v node >/dev/null 2>&1 && node -e "$accepts"; then return; fi
  local version prefix
  version="$(pinned_node_version)"
  prefix="$(pinned_node_prefix)"
  PATH="$prefix/node_modules/.bin:$PATH"
  export PATH
  [ -n "${MERIDIAN_NODE_SAID:-}" ] || say "running on Node $version from the cache (the machine's node is older than 22.12)"
  export MERIDIAN_NODE_SAID=1
  node -e "$accepts" || die "Node.js $version from $prefix does not run here ($(node --version 2>&1))."
}

pinned_node_version() { tr -d '[:space:]' <"$MERIDIAN_ROOT/.node-version"; }

# The folder holding the Node of .node-version (node_modules/node/bin/node), installed there once with the machine's
# npm; the images' local base takes its binary from here too.
pinned_node_prefix() {
  local version prefix
  version="$(pinned_node_version)"
  prefix="$MERIDIAN_CACHE_DIR/tools/node-$version"
  if [ ! -x "$prefix/node_modules/node/bin/node" ]; then
    command -v npm >/dev/null 2>&1 ||
      die "Node.js >= 22.12 is required; with an older Node.js and its npm, Meridian obtains Node $version itself."
    say "installing Node.js $version (the npm registry's node package) into $prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-save --no-fund --no-audit --loglevel=error "node@$version" >&2
  fi
  echo "$prefix"
}

# The pnpm version pinned in package.json#packageManager, installed once into the cache folder.
ensure_pnpm() {
  local version
  version="$(node -p 'require(process.argv[1]).packageManager.split("@")[1]' "$MERIDIAN_ROOT/package.json")"
  local prefix="$MERIDIAN_CACHE_DIR/tools/pnpm-$version"
  if [ ! -x "$prefix/node_modules/.bin/pnpm" ]; then
    say "installing pnpm $version into $prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-save --no-fund --no-audit --loglevel=error "pnpm@$version" >&2
  fi
  PATH="$prefix/node_modules/.bin:$PATH"
  export PATH
}

# `pnpm install` when node_modules is missing or older than the lockfile / manifests.
ensure_deps() {
  ensure_node
  ensure_pnpm
  local stamp="$MERIDIAN_ROOT/node_modules/.meridian-install-stamp"
  local digest
  # the workspaces' manifests (pnpm-workspace.yaml's folders), not build/<service>/package.json that ./scripts/build writes
  digest="$(cd "$MERIDIAN_ROOT" && cat pnpm-lock.yaml pnpm-workspace.yaml package.json {bench,deploy,infra}/package.json \
    {apps,packages,services,tests}/*/package.json 2>/dev/null | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    say "installing dependencies (pnpm install)"
    (cd "$MERIDIAN_ROOT" && pnpm install --frozen-lockfile >&2)
    echo "$digest" >"$stamp"
  fi
}

# Obtains what the purposes need (./scripts/prepare --for <purposes>: dev, test, or some of engines, trace-store, e2e,
# containers, engine-images, cluster, deploy, fuzz, payments, mail); quick when everything is there. Inside
# ./scripts/test, after its preparation (MERIDIAN_PREPARED=1), it only checks: nothing a test starts obtains anything.
prepare_for() {
  infra prepare --for "$1"
}

infra() {
  "$MERIDIAN_ROOT/infra/node_modules/.bin/tsx" "$MERIDIAN_ROOT/infra/src/cli.ts" "$@"
}
