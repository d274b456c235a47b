#!/bin/sh
# rehearsal.sh: how close `stagger update start --dry-run` predicts an
# update's time. A staggerd on the local runtime runs the example job
# (examples/hello.json: 6 real stagger-example-server processes, batches of
# 2, a 5 s watch) through R updates; before each but the first, the
# rehearsal's prediction is read, then the update runs and its timeline
# says what it took. Prints each update's prediction, time, physical limit
# and the prediction's error.
#
#   BUILDDIR=... bench/rehearsal.sh [--updates R] [--watch SECS] [--json FILE]
set -eu

R=4
WATCH=5
JSON=
while [ $# -gt 0 ]; do
  case "$1" in
    --updates) R=$2; shift 2 ;;
    --watch) WATCH=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "rehearsal.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${BUILDDIR:?set BUILDDIR to the build tree}"
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stagger-rehearsal-XXXXXX")
daemon=

cleanup () {
  stop_staggerd local/www/prod/hello
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

job_file () {   # $1: version
  sed -e "s/\"watch_secs\": 5/\"watch_secs\": $WATCH/" \
      -e "s/hello, world/hello, v$1/" \
      -e "s|\"stagger-example-server\"|\"$BUILDDIR/stagger-example-server\"|" \
      "$(dirname "$0")/../examples/hello.json" > "$tmp/v$1.json"
}

json () {   # $1: a Python expression on the JSON document d read from stdin
  python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

job_file 0
start_staggerd --port-range 15100-15199
$stagger job create local/www/prod/hello "$tmp/v0.json" >/dev/null
$stagger job status local/www/prod/hello >/dev/null
printf '%-8s %12s %10s %10s %8s\n' "update" "predicted s" "took s" "limit s" "error"
rows=
i=1
while [ "$i" -le "$R" ]; do
  job_file "$i"
  predicted=$($stagger --json update start --dry-run local/www/prod/hello "$tmp/v$i.json" |
    json 'd["rehearsal"]["predictedMs"]')
  $stagger update start --wait local/www/prod/hello "$tmp/v$i.json" >/dev/null
  $stagger --json update timeline local/www/prod/hello > "$tmp/t.json"
  took=$(json 'd["to_ms"] - d["from_ms"]' < "$tmp/t.json")
  limit=$(json 'd["limit_ms"]' < "$tmp/t.json")
  if [ "$predicted" -ge 0 ]; then
    err=$(calc "($predicted - $took) * 100 / $took")
    printf '%-8s %12.1f %10.1f %10.1f %7.1f%%\n' "$i" "$(calc "$predicted / 1000")" \
      "$(calc "$took / 1000")" "$(calc "$limit / 1000")" "$err"
  else
    err=null
    printf '%-8s %12s %10.1f %10.1f %8s\n' "$i" "none" "$(calc "$took / 1000")" \
      "$(calc "$limit / 1000")" "-"
  fi
  rows="$rows${rows:+, }{\"predicted_ms\": $predicted, \"took_ms\": $took, \"limit_ms\": $limit, \"error_pct\": $err}"
  i=$((i + 1))
done
if [ -n "$JSON" ]; then
  printf '{"watch_secs": %s, "updates": [%s]}\n' "$WATCH" "$rows" > "$JSON"
fi
