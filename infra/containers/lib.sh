# The container engine and the Node bases of Meridian's images, for scripts/images and the tests that run containers.
# Sourced after scripts/lib.sh, not run.
#
# The engine: Docker where a Docker engine answers; otherwise Debian's podman (with buildah inside `podman build`),
# installed by ./scripts/prepare, configured by infra/containers/containers.conf (runc, host networking, the ulimits
# this kind of machine allows). MERIDIAN_CONTAINER_ENGINE=docker|podman chooses.

MERIDIAN_CONTAINERS_DIR="$MERIDIAN_ROOT/infra/containers"
# podman's and buildah's settings, for every command of the sourcing script (Docker does not read it). Exported here,
# not by container_engine, whose callers run it in a subshell: `engine="$(container_engine)"`.
export CONTAINERS_CONF="${CONTAINERS_CONF:-$MERIDIAN_CONTAINERS_DIR/containers.conf}"
# The bases the images are built on, as a Docker machine pulls them (build arguments of the Dockerfile)
MERIDIAN_BUILD_BASE="${MERIDIAN_BUILD_BASE:-node:24-bookworm-slim}"
MERIDIAN_RUNTIME_BASE="${MERIDIAN_RUNTIME_BASE:-node:24-bookworm-slim}"
# npm in the locally built build base (the official image carries an npm 11 too)
MERIDIAN_BASE_NPM_VERSION=11.21.2

# Prints docker or podman (podman when no Docker engine answers); podman must be there (./scripts/prepare).
container_engine() {
  local chosen="${MERIDIAN_CONTAINER_ENGINE:-}"
  if [ -z "$chosen" ]; then
    if command -v docker >/dev/null 2>&1 && timeout 10 docker info >/dev/null 2>&1; then chosen=docker; else chosen=podman; fi
  fi
  if [ "$chosen" = podman ]; then
    command -v podman >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 ||
      die "podman and runc are missing (no Docker engine answers here): run ./scripts/prepare (it installs them with apt-get)"
  fi
  echo "$chosen"
}

# True when the engine has the image or can pull it (a machine without a reachable registry fails at once).
image_available() {
  local engine="$1" image="$2"
  "$engine" image inspect "$image" >/dev/null 2>&1 && return 0
  timeout 300 "$engine" pull -q "$image" >/dev/null 2>&1
}

# True when the engine has both bases the images would be built on (the official ones or those built here), without
# pulling or building anything.
node_bases_present() {
  local engine="$1" version
  version="$(pinned_node_version)"
  { "$engine" image inspect "$MERIDIAN_BUILD_BASE" >/dev/null 2>&1 ||
    "$engine" image inspect "localhost/meridian/node:$version-bookworm" >/dev/null 2>&1; } &&
    { "$engine" image inspect "$MERIDIAN_RUNTIME_BASE" >/dev/null 2>&1 ||
      "$engine" image inspect "localhost/meridian/node:$version-bookworm-slim" >/dev/null 2>&1; }
}

# Sets MERIDIAN_BUILD_BASE and MERIDIAN_RUNTIME_BASE to images the engine has: the official ones when they can be
# pulled, otherwise equivalents built here (once per Node version) and tagged localhost/meridian/node:<version>-*.
ensure_node_bases() {
  local engine="$1" version
  version="$(pinned_node_version)"
  if ! image_available "$engine" "$MERIDIAN_BUILD_BASE"; then
    local local_build="localhost/meridian/node:$version-bookworm"
    say "$MERIDIAN_BUILD_BASE cannot be pulled here: building on $local_build (Debian bookworm minbase made with mmdebstrap, Node $version, npm $MERIDIAN_BASE_NPM_VERSION)"
    "$engine" image inspect "$local_build" >/dev/null 2>&1 || build_node_base "$engine" build "$local_build"
    MERIDIAN_BUILD_BASE="$local_build"
  fi
  if ! image_available "$engine" "$MERIDIAN_RUNTIME_BASE"; then
    local local_runtime="localhost/meridian/node:$version-bookworm-slim"
    say "$MERIDIAN_RUNTIME_BASE cannot be pulled here: running on $local_runtime (Debian bookworm's libc and libstdc++ extracted by mmdebstrap, Node $version; no shell)"
    "$engine" image inspect "$local_runtime" >/dev/null 2>&1 || build_node_base "$engine" runtime "$local_runtime"
    MERIDIAN_RUNTIME_BASE="$local_runtime"
  fi
  export MERIDIAN_BUILD_BASE MERIDIAN_RUNTIME_BASE
}

# The apt sources of this machine, which mmdebstrap copies into the root it makes (the repository names no mirror).
host_apt_sources() {
  local file
  for file in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    if [ -s "$file" ] && grep -q '^[^#]' "$file"; then echo "$file"; return; fi
  done
  die "mmdebstrap needs Debian's apt sources: none found in /etc/apt"
}

# bookworm_rootfs <tarball> <mmdebstrap options...>: a Debian bookworm root from this machine's apt sources, without
# documentation, manual pages and translations (nothing in an image reads them).
bookworm_rootfs() {
  local tarball="$1"
  shift
  command -v mmdebstrap >/dev/null 2>&1 || die "mmdebstrap is missing: run ./scripts/prepare (it installs it with apt-get)"
  mmdebstrap --quiet --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    "$@" bookworm "$tarball" "$(host_apt_sources)" >&2
}

# build_node_base <engine> build|runtime <tag>: a bookworm root from mmdebstrap, the pinned Node (and npm for build).
build_node_base() {
  local engine="$1" kind="$2" tag="$3" version context
  version="$(pinned_node_version)"
  context="$MERIDIAN_CACHE_DIR/images/node-base-$kind"
  rm -rf "$context" && mkdir -p "$context"
  cp "$MERIDIAN_CONTAINERS_DIR/base/Containerfile.$kind" "$MERIDIAN_CONTAINERS_DIR/base/passwd" \
    "$MERIDIAN_CONTAINERS_DIR/base/group" "$context/"
  cp "$(readlink -f "$(pinned_node_prefix)/node_modules/node/bin/node")" "$context/node"
  if [ "$kind" = runtime ]; then
    # only what node links against (and time zones): no dpkg, no shell
    bookworm_rootfs "$context/rootfs.tar" --variant=extract \
      --include=libc6,libgcc-s1,libstdc++6,base-files,netbase,tzdata
    # the symbol table is for native debuggers; without it the image is 18 MB smaller
    if command -v strip >/dev/null 2>&1; then strip --strip-all "$context/node"; fi
  else
    bookworm_rootfs "$context/rootfs.tar" --variant=minbase
    (cd "$context" && npm pack --silent "npm@$MERIDIAN_BASE_NPM_VERSION" >/dev/null && mv npm-*.tgz npm.tgz)
  fi
  "$engine" build --network host --build-arg "NODE_VERSION=$version" -f "$context/Containerfile.$kind" \
    -t "$tag" "$context" >&2
  rm -rf "$context"
}

# The compose command for the engine: `docker compose` with Docker; with podman, podman-compose (pinned, from PyPI,
# installed once into the cache by ./scripts/prepare: Debian's 1.0.3 knows neither profiles nor depends_on conditions).
compose_command() {
  local engine="$1"
  if [ "$engine" = docker ]; then echo "docker compose"; return; fi
  infra where podman-compose
}
