#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on a loopback port and prints one line of shell exports:
#   eval "$(bash packages/durable/scripts/pg-up.sh 54329)"   # sets PGDIR and DATABASE_URL
# Installs Debian's postgresql first when no initdb is found (needs root, as on CI machines).
# As root, the server runs as the "postgres" user (initdb refuses root). Stop it with pg-down.sh.
# Extra server settings may be given in PG_OPTS (e.g. PG_OPTS="-c fsync=off" for tests).
# Only the export line goes to stdout; progress goes to stderr.
set -euo pipefail
PORT="${1:-54329}"
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true; }
PGBIN="$(find_bin)"
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
  if [ "$(id -u)" != "0" ]; then
    echo "pg-up: no /usr/lib/postgresql/*/bin/initdb; install Debian's postgresql package" >&2
    exit 1
  fi
  echo "pg-up: installing postgresql" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  PGBIN="$(find_bin)"
fi
PGDIR="$(mktemp -d -t tickwork-pg.XXXXXX)"
as_owner() { "$@"; }
if [ "$(id -u)" = "0" ]; then
  chown postgres:postgres "$PGDIR"
  as_owner() { runuser -u postgres -- "$@"; }
fi
as_owner "$PGBIN/initdb" -D "$PGDIR/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
  >"$PGDIR/initdb.log" 2>&1 || { cat "$PGDIR/initdb.log" >&2; exit 1; }
as_owner "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $PGDIR -c max_connections=200 ${PG_OPTS:-}" start >&2 \
  || { cat "$PGDIR/server.log" >&2; exit 1; }
as_owner "$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres tickwork
echo "export PGDIR=$PGDIR DATABASE_URL=postgres://postgres@127.0.0.1:$PORT/tickwork"
