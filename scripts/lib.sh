# Shared by scripts/*: finds Node and the pinned pnpm, installs dependencies when the lockfile changed.
# Sourced, not run.
set -euo pipefail

MERIDIAN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MERIDIAN_CACHE_DIR="${MERIDIAN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/meridian}"
export MERIDIAN_CACHE_DIR

say() { printf '\033[1m[meridian]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[meridian]\033[0m %s\n' "$*" >&2; exit 1; }

ensure_node() {
  command -v node >/dev/null 2>&1 || die "Node.js >= 20.19 is required (none on PATH)."
  node -e '
    const [maj, min] = process.versions.node.split(".").map(Number)
    if (maj < 20 || (maj === 20 && min < 19)) { console.error(`Node.js >= 20.19 is required (found ${process.versions.node}).`); process.exit(1) }
  ' || exit 1
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
  digest="$(cd "$MERIDIAN_ROOT" && cat pnpm-lock.yaml pnpm-workspace.yaml package.json */package.json */*/package.json 2>/dev/null | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    say "installing dependencies (pnpm install)"
    (cd "$MERIDIAN_ROOT" && pnpm install --frozen-lockfile >&2)
    echo "$digest" >"$stamp"
  fi
}

infra() {
  "$MERIDIAN_ROOT/infra/node_modules/.bin/tsx" "$MERIDIAN_ROOT/infra/src/cli.ts" "$@"
}
