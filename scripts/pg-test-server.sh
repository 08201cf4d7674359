#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for the store tests.
#
#   eval "$(scripts/pg-test-server.sh start)"   # prints export lines: PROVIDERKIT_PG_DSN, PROVIDERKIT_PG_DIR
#   scripts/pg-test-server.sh stop [DIR]        # stops it and removes its data (DIR defaults to $PROVIDERKIT_PG_DIR)
#
# Uses initdb/pg_ctl from PATH or /usr/lib/postgresql/*/bin; installs Debian's `postgresql`
# package when neither has them. PostgreSQL refuses to run as root, so under root the cluster
# belongs to the `postgres` user (created if missing). Progress goes to stderr; stdout carries
# only the export lines.
set -euo pipefail

log() { echo "pg-test-server: $*" >&2; }

find_bindir() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v initdb)")"
    return 0
  fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  return 1
}

ensure_binaries() {
  if find_bindir >/dev/null; then return 0; fi
  log "initdb not found; installing Debian's postgresql package"
  if [ "$(id -u)" -ne 0 ]; then
    log "need root to apt-get install postgresql (or put initdb/pg_ctl on PATH)"; exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  find_bindir >/dev/null || { log "postgresql installed but initdb still not found"; exit 1; }
}

# Run a command as the cluster owner (the current user unless we are root).
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  ensure_binaries
  local bindir owner dir port dsn
  bindir="$(find_bindir)"
  if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    id -u postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  else
    owner="$(id -un)"
  fi
  dir="$(mktemp -d "${TMPDIR:-/tmp}/providerkit-pg.XXXXXX")"
  chown "$owner" "$dir"
  chmod 700 "$dir"
  port="$(free_port)"
  log "initdb in $dir (owner $owner, binaries $bindir)"
  as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=100" start >/dev/null \
    || { log "server failed to start; log follows"; cat "$dir/server.log" >&2; exit 1; }
  echo "$bindir" >"$dir/bindir"
  as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres providerkit_test \
    || { log "createdb failed"; stop "$dir"; exit 1; }
  dsn="postgresql://postgres@127.0.0.1:$port/providerkit_test"
  log "PostgreSQL running on 127.0.0.1:$port"
  echo "export PROVIDERKIT_PG_DSN=$dsn"
  echo "export PROVIDERKIT_PG_DIR=$dir"
}

stop() {
  local dir="${1:-${PROVIDERKIT_PG_DIR:-}}"
  if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then
    log "no server directory given (pass it or set PROVIDERKIT_PG_DIR)"; return 0
  fi
  case "$dir" in */providerkit-pg.*) ;; *) log "refusing to remove $dir (not made by this script)"; exit 1 ;; esac
  as_owner "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  rm -rf "$dir"
  log "stopped and removed $dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
