#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store tests, on a loopback port, in a temporary folder.
#
#   eval "$(scripts/postgres.sh start)"   # installs Debian's postgresql when missing; exports
#                                         # TOOLWIRE_PG_URL and TOOLWIRE_PG_DIR
#   scripts/postgres.sh stop              # stops the cluster in $TOOLWIRE_PG_DIR and removes it
#
# The cluster runs with fsync=off (tests and CI measure nothing on disk). TOOLWIRE_PG_FSYNC=on
# starts it with fsync=on, for benchmarks that must count WAL flushes (bench/store.mjs says which
# it measured). The server never runs as root: as root, the cluster belongs to the 'postgres' user (created
# by the package). Only the 'export' lines go to stdout; progress goes to stderr.
set -euo pipefail

run_as() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  return 1
}

start() {
  local bin
  if ! bin=$(bindir); then
    echo "postgres.sh: installing Debian's postgresql" >&2
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    else
      sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    bin=$(bindir)
  fi
  local dir port fsync=${TOOLWIRE_PG_FSYNC:-off}
  case "$fsync" in on|off) ;; *) echo "postgres.sh: TOOLWIRE_PG_FSYNC must be on or off" >&2; exit 2 ;; esac
  dir=$(mktemp -d /tmp/toolwire-pg.XXXXXX)
  chmod 755 "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
  # a free loopback port, as the kernel hands one out
  port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  run_as "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >&2
  run_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=$fsync -c max_connections=400" start >&2
  run_as "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres toolwire >&2
  echo "postgres.sh: PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port in $dir (fsync=$fsync)" >&2
  echo "export TOOLWIRE_PG_URL=postgres://postgres@127.0.0.1:$port/toolwire"
  echo "export TOOLWIRE_PG_DIR=$dir"
}

stop() {
  local dir=${TOOLWIRE_PG_DIR:-} bin
  if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then return 0; fi
  bin=$(bindir)
  run_as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
