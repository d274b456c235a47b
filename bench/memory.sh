#!/bin/sh
# memory.sh: staggerd's memory with many jobs and active updates, and how
# fast it serves the update page's data for a large update.
#
#   BUILDDIR=... bench/memory.sh [--jobs N] [--instances M] [--updates U] [--json FILE]
#
# A staggerd with the simulated runtime (instances are rows, healthy at
# once) gets N jobs of M instances and U active updates (long watch time,
# so they stay in flight); we read its peak RSS (VmHWM). Then a job of
# 10,000 instances gets an update, and we time GET /ui/api/update (the
# update page's JSON) 20 times with curl and report the median; then
# getJobUpdateDetails of that update over /api (Thrift JSON), first and the
# median of 20 more.
set -eu

JOBS=1000
INSTANCES=100
UPDATES=100
JSON=
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) JOBS=$2; shift 2 ;;
    --instances) INSTANCES=$2; shift 2 ;;
    --updates) UPDATES=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "memory.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${BUILDDIR:?set BUILDDIR to the build tree}"
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stagger-memory-XXXXXX")
daemon=
cleanup () {
  stop_staggerd
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

job_file () {   # $1: name, $2: instances, $3: version
  cat > "$tmp/$1-$3.json" <<EOF
{"cluster": "local", "role": "bench", "environment": "prod", "name": "$1", "instances": $2,
 "task": {"command": "serve --version $3"},
 "update_config": {"batch_size": 1, "watch_secs": 3600}}
EOF
}

start_staggerd --runtime=simulated

t0=$(date +%s)
j=0
while [ "$j" -lt "$JOBS" ]; do
  job_file "job$j" "$INSTANCES" 1
  $stagger job create "local/bench/prod/job$j" "$tmp/job$j-1.json" >/dev/null
  rm -f "$tmp/job$j-1.json"
  j=$((j + 1))
done
j=0
while [ "$j" -lt "$UPDATES" ]; do
  job_file "job$j" "$INSTANCES" 2
  $stagger update start "local/bench/prod/job$j" "$tmp/job$j-2.json" >/dev/null
  j=$((j + 1))
done
t1=$(date +%s)
sleep 2
rss_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$daemon/status")
now_kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$daemon/status")

job_file big 10000 1
job_file big 10000 2
$stagger job create local/bench/prod/big "$tmp/big-1.json" >/dev/null
id=$($stagger --json update start local/bench/prod/big "$tmp/big-2.json" | tr -d '\n ' |
     sed -e 's/.*"id":"\([^"]*\)".*/\1/')
url="http://127.0.0.1:$port/ui/api/update?role=bench&environment=prod&name=big&id=$id"
size=$(curl -s "$url" | wc -c)
times=""
i=0
while [ "$i" -lt 20 ]; do
  times="$times $(curl -s -o /dev/null -w '%{time_total}' "$url")"
  i=$((i + 1))
done
median () { echo "$1" | tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] * 1000 }'; }
median_ms=$(median "$times")

# The same update through Aurora's API: getJobUpdateDetails over HTTP
# (Thrift JSON), first asked (the store is read and the answer encoded) and
# then 20 more times (answered from the reply cache while nothing changes).
body='[1,"getJobUpdateDetails",1,0,{"1":{"rec":{"1":{"rec":{"1":{"str":"bench"},"2":{"str":"prod"},'
body="$body"'"3":{"str":"big"}}},"2":{"str":"'"$id"'"}}}}]'
details () {
  curl -s -o "$tmp/details.out" -w '%{time_total}' -H 'Content-Type: application/vnd.apache.thrift.json' \
    --data-binary "$body" "http://127.0.0.1:$port/api"
}
first_details_ms=$(awk "BEGIN { print $(details) * 1000 }")
grep -q '"responseCode"\|^\[1,"getJobUpdateDetails",2' "$tmp/details.out" ||
  { echo "memory.sh: getJobUpdateDetails failed: $(head -c 300 "$tmp/details.out")" >&2; exit 1; }
details_size=$(wc -c < "$tmp/details.out")
times=""
i=0
while [ "$i" -lt 20 ]; do
  times="$times $(details)"
  i=$((i + 1))
done
details_ms=$(median "$times")

rss_mib=$(awk "BEGIN { printf \"%.1f\", $rss_kb / 1024 }")
rss_ok=$(awk "BEGIN { print ($rss_kb / 1024 < 200) ? \"met\" : \"missed\" }")
json_ok=$(awk "BEGIN { print ($median_ms < 50) ? \"met\" : \"missed\" }")
printf '%-58s %10s\n' "staggerd with $JOBS jobs of $INSTANCES instances, $UPDATES active updates" ""
printf '%-58s %10s   (target: under 200 MiB, %s)\n' "  peak RSS (VmHWM), MiB" "$rss_mib" "$rss_ok"
printf '%-58s %10.1f\n' "  RSS now, MiB" "$(awk "BEGIN { print $now_kb / 1024 }")"
printf '%-58s %10d\n' "  seconds to create them through the CLI" "$((t1 - t0))"
printf '%-58s %10.1f   (target: under 50 ms, %s)\n' "update page JSON, 10,000 instances: median ms of 20" "$median_ms" "$json_ok"
printf '%-58s %10d\n' "  its size, bytes" "$size"
details_ok=$(awk "BEGIN { print ($details_ms < 20) ? \"met\" : \"missed\" }")
printf '%-58s %10.1f\n' "getJobUpdateDetails, 10,000 instances: first, ms" "$first_details_ms"
printf '%-58s %10.1f   (target: under 20 ms, %s)\n' "  then the median ms of 20" "$details_ms" "$details_ok"
printf '%-58s %10d\n' "  its size, bytes (Thrift JSON)" "$details_size"
if [ -n "$JSON" ]; then
  printf '{"jobs": %d, "instances": %d, "updates": %d, "peak_rss_mib": %s, "update_json_median_ms": %s, "update_json_bytes": %d, "details_first_ms": %s, "details_median_ms": %s}\n' \
    "$JOBS" "$INSTANCES" "$UPDATES" "$rss_mib" "$median_ms" "$size" "$first_details_ms" "$details_ms" > "$JSON"
fi
