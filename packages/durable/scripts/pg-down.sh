#!/usr/bin/env bash
# Stops a cluster started by pg-up.sh and deletes its directory: bash pg-down.sh "$PGDIR"
set -uo pipefail
PGDIR="${1:?usage: pg-down.sh PGDIR}"
PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -f "$PGDIR/data/postmaster.pid" ]; then
  if [ "$(id -u)" = "0" ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast -w -t 30 stop >&2
  else
    "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast -w -t 30 stop >&2
  fi || kill -9 "$(head -1 "$PGDIR/data/postmaster.pid")" # last resort, by the postmaster's pid
fi
rm -rf "$PGDIR"
