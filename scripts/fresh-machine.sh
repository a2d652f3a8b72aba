# ./scripts/test --fresh: makes this machine as bare as a new one for the run that follows, where that is safe.
# Sourced by scripts/test after scripts/lib.sh, not run.
#
# - the engines an earlier run left (their pids recorded in the cache folder) are stopped, by those pids;
# - Meridian's images (localhost/meridian/*, meridian/*) and podman's build caches are removed;
# - the Debian packages earlier preparations installed are purged: those of apt's history entries that installed only
#   packages the preparation declares (their automatic dependencies with them); a package the machine had before, or
#   that something else asked for in the same command, is left alone; apt's cache of downloaded packages is emptied;
# - the run gets a new cache folder with every download and build cache inside it (Meridian's, Go's modules and builds,
#   Maven's repository, pip's, npm's and pnpm's), and the checkout's node_modules go.
# The developer's own cache folder is left as it is (a later run without --fresh is warm again, once its packages are
# installed again); the new folder is kept for reading afterwards and named at the start.

# stop_recorded <pid file> <signal>: the process a pid file of scripts/infra names ("pid start-time"), if that very
# process still runs (the start time tells a reused pid), by that pid; waits up to 30 s for it to go.
stop_recorded() {
  local file="$1" signal="$2" pid started now
  [ -s "$file" ] || return 0
  read -r pid started <"$file" || true
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 0
  now="$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f20)"
  [ "$now" = "$started" ] || return 0
  say "--fresh: stopping pid $pid ($file)"
  kill "-$signal" "$pid" 2>/dev/null || return 0
  local deadline=$((SECONDS + 30))
  while [ -e "/proc/$pid" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  if [ -e "/proc/$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
}

# The packages to purge: the Install: lines of apt's history entries whose command installed only packages the
# preparation declares (infra/src/prepare/infra-prerequisites.ts), still installed now.
prepared_packages() {
  local declared="redis-server chromium jq podman buildah runc mmdebstrap iptables iproute2 postgresql-15 openssl python3-venv"
  local history
  for history in /var/log/apt/history.log.1.gz /var/log/apt/history.log; do
    [ -f "$history" ] || continue
    case "$history" in *.gz) zcat "$history" ;; *) cat "$history" ;; esac
  done | awk -v declared="$declared" '
    BEGIN { split(declared, names, " "); for (i in names) ours[names[i]] = 1 }
    /^Commandline:/ {
      mine = 0
      if ($0 ~ / install /) {
        mine = 1; n = 0
        for (i = 2; i <= NF; i++) {
          if ($i ~ /^-/ || $i == "apt-get" || $i == "install" || $i ~ /^[A-Za-z:]+=/) continue
          n++
          if (!($i in ours)) mine = 0
        }
        if (n == 0) mine = 0
      }
    }
    /^Install:/ && mine {
      line = substr($0, 10)
      while (match(line, /[a-z0-9][a-z0-9.+-]*:[a-z0-9]+ \(/)) {
        name = substr(line, RSTART, RLENGTH - 2); sub(/:.*/, "", name); print name
        line = substr(line, RSTART + RLENGTH)
      }
    }' | sort -u | while read -r name; do
    if dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'install ok installed'; then echo "$name"; fi
  done
}

# stop_engines_recorded <cache folder>: every engine scripts/infra started there, by the pid it recorded in its folder
# (<cache>/<engine>/meridian.pid; a list of names here missed Mailpit once it came, and the bare run's own Mailpit
# found port 1025 held); PostgreSQL on SIGINT (its fast shutdown), the others on SIGTERM.
stop_engines_recorded() {
  local file
  for file in "$1"/*/meridian.pid; do
    [ -e "$file" ] || continue
    if [ "$file" = "$1/postgres/meridian.pid" ]; then stop_recorded "$file" INT; else stop_recorded "$file" TERM; fi
  done
}

make_machine_bare() {
  local old_cache="$MERIDIAN_CACHE_DIR" name
  say "--fresh: making this machine bare (the developer's cache folder $old_cache is kept)"
  stop_engines_recorded "$old_cache"
  stop_recorded "${MERIDIAN_POSTGRES_DIR:-/var/lib/meridian/postgres}/meridian.pid" INT
  if command -v podman >/dev/null 2>&1; then
    local images
    images="$(podman images --format '{{.Repository}}:{{.Tag}}' 2>/dev/null | grep -E '^(localhost/)?meridian/' || true)"
    if [ -n "$images" ]; then
      say "--fresh: removing Meridian's images ($(echo "$images" | wc -l))"
      # shellcheck disable=SC2086 # one image a word
      podman rmi -f $images >/dev/null 2>&1 || true
    fi
    podman image prune -f >/dev/null 2>&1 || true
  fi
  rm -rf /var/tmp/buildah-cache-* 2>/dev/null || true
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    local packages
    packages="$(prepared_packages | tr '\n' ' ')"
    if [ -n "${packages// /}" ]; then
      # apt removes what depends on a purged package too: only when that is nothing else than these
      local others
      # shellcheck disable=SC2086 # one package a word
      others="$(apt-get -s purge $packages 2>/dev/null | awk '/^Purg|^Remv/ { print $2 }' | sort -u |
        grep -vxF -f <(echo "$packages" | tr ' ' '\n' | sed '/^$/d') || true)"
      [ -z "$others" ] || die "--fresh: purging them would also remove $(echo "$others" | tr '\n' ' ')(installed otherwise): purge by hand"
      say "--fresh: purging what earlier preparations installed: $packages"
      # shellcheck disable=SC2086 # one package a word
      DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $packages >/dev/null ||
        die "--fresh: apt-get purge failed"
    fi
    # and apt's cache of downloaded packages: a new machine downloads them (apt-get clean empties only that cache)
    apt-get clean || die "--fresh: apt-get clean failed"
    say "--fresh: apt's cache of downloaded packages emptied (apt-get clean)"
  else
    say "--fresh: not root: the Debian packages stay (only root may purge them)"
  fi
  # the folders earlier --fresh runs made (10-11 GB each: Go's module and build caches, Maven's, the engines' data):
  # they are throwaways, their engines stopped when their run ended, and kept they fill the disk in a few runs
  local earlier
  for earlier in /var/tmp/meridian-fresh-*; do
    [ -d "$earlier" ] || continue
    chmod -R u+w "$earlier" 2>/dev/null || true
    rm -rf "$earlier" && say "--fresh: removed an earlier run's folder $earlier"
  done
  local fresh
  fresh="/var/tmp/meridian-fresh-$(date +%Y%m%d-%H%M%S)"
  # the PostgreSQL server runs as its own user when the run is root's: it must be able to enter the folder
  mkdir -p "$fresh" && chmod 755 "$fresh"
  export XDG_CACHE_HOME="$fresh/cache" XDG_DATA_HOME="$fresh/data" GOPATH="$fresh/go"
  export MERIDIAN_CACHE_DIR="$XDG_CACHE_HOME/meridian" MERIDIAN_POSTGRES_DIR="$fresh/postgres"
  # the cluster's hosts' PostgreSQL and Patroni (root: /var/lib/meridian/cluster otherwise)
  export MERIDIAN_CLUSTER_DIR="$fresh/cluster"
  export GOCACHE="$XDG_CACHE_HOME/go-build" GOMODCACHE="$GOPATH/pkg/mod" PIP_CACHE_DIR="$XDG_CACHE_HOME/pip"
  export npm_config_cache="$XDG_CACHE_HOME/npm" npm_config_store_dir="$XDG_DATA_HOME/pnpm/store"
  export MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }-Dmaven.repo.local=$fresh/m2/repository"
  find "$MERIDIAN_ROOT" -name node_modules -type d -prune -exec rm -rf {} + 2>/dev/null || true
  say "--fresh: a new cache folder: $fresh (Meridian's cache, Go, Maven, pip, npm and pnpm inside it)"
}
