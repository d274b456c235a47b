#!/bin/sh
# pg.sh: runs a command beside a throwaway PostgreSQL, so the benchmarks
# can put PostgreSQL figures beside SQLite's in the same run.
#
#   bench/pg.sh COMMAND [ARGUMENT...]
#
# Starts Debian's PostgreSQL 15 (initdb and pg_ctl from
# /usr/lib/postgresql/15/bin, or $STG_PG_BINDIR) in a temporary directory,
# on 127.0.0.1 and a free port of 20000-20999, as "nobody" when run as root
# (postgres refuses root), with trust auth for the user "stagger" and the
# server's default durability (fsync on: the figures are honest). Runs
# COMMAND with STG_BENCH_PG set to the server's conninfo, then stops the
# server and removes it. Without PostgreSQL it says so in one line and
# runs COMMAND without STG_BENCH_PG.
set -eu

bindir=${STG_PG_BINDIR:-/usr/lib/postgresql/15/bin}
if [ ! -x "$bindir/initdb" ]; then
  echo "pg.sh: PostgreSQL is not installed ($bindir/initdb): SQLite figures only" >&2
  "$@"
  exit $?
fi
dir=$(mktemp -d /tmp/stg-bench-pg-XXXXXX)
as=
if [ "$(id -u)" = 0 ]; then
  chown nobody "$dir"
  as="runuser -u nobody --"
fi
cleanup () {
  $as "$bindir/pg_ctl" stop -w -m fast -D "$dir/data" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
(cd "$dir" && $as "$bindir/initdb" -D "$dir/data" -U stagger -A trust -E UTF8 --locale=C) \
  >/dev/null
port=
for p in $(shuf -i 20000-20999 -n 8); do
  if (cd "$dir" && $as "$bindir/pg_ctl" start -w -t 60 -D "$dir/data" -l "$dir/log" \
      -o "-p $p -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir") >/dev/null 2>&1
  then
    port=$p
    break
  fi
done
if [ -z "$port" ]; then
  echo "pg.sh: PostgreSQL would not start:" >&2
  cat "$dir/log" >&2 || true
  exit 1
fi
STG_BENCH_PG="host=127.0.0.1 port=$port user=stagger dbname=postgres"
export STG_BENCH_PG
status=0
"$@" || status=$?
exit $status
