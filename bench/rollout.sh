#!/bin/sh
# rollout.sh: an end-to-end rollout of real processes, the same rollout
# done by hand, and the physical limit of each, in one run.
#
#   BUILDDIR=... bench/rollout.sh [--instances N] [--batch B] [--serial] [--json FILE]
#
# Stagger: a real staggerd with the local runtime rolls N instances of
# stagger-example-server (HTTP health check every 0.1 s, watch time 0,
# batches of B) to a new version; we time `stagger update start --wait` and
# read staggerd's CPU time from /proc. Baseline: the shell script a
# competent user writes without Stagger, on the same kind of processes: for
# each batch, every instance of the batch at once (`&`, then `wait`): stop
# the old process, start the new one, poll its /health with curl every
# 0.1 s until it answers. With --serial, also the script that does the
# batch's instances one after another (a second row).
# Physical limit of a run: the sum over batches of the slowest instance's
# time from its start to its first passing health check, read from the
# instances' own "ready:" lines; no rollout in batches can be faster.
# Prints the wall times, each run's ratio to its physical limit, Stagger's
# ratio to the script and Stagger's CPU time.
set -eu

N=200
B=20
JSON=
SERIAL=
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) N=$2; shift 2 ;;
    --batch) B=$2; shift 2 ;;
    --serial) SERIAL=1; shift ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "rollout.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${BUILDDIR:?set BUILDDIR to the build tree}"
. "$(dirname "$0")/common.sh"
server="$BUILDDIR/stagger-example-server"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stagger-rollout-XXXXXX")
daemon=

now () { date +%s.%N; }
ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

cleanup () {
  stop_staggerd local/bench/prod/fleet
  for f in "$tmp"/pid.*; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

job_file () {   # $1: version
  cat > "$tmp/v$1.json" <<EOF
{
  "cluster": "local", "role": "bench", "environment": "prod", "name": "fleet",
  "instances": $N,
  "resources": {"ports": ["http"]},
  "task": {"argv": ["$server", "--port", "{{ports[http]}}"], "env": {"V": "$1"}},
  "health_check_config": {"health_checker": {"http": {"endpoint": "/health"}},
                          "initial_interval_secs": 5, "interval_secs": 0.1},
  "update_config": {"watch_secs": 0, "update_strategy": {"batch": {"batch_size": $B}},
                    "max_total_failures": 0, "rollback_on_failure": true}
}
EOF
}

# ---- Stagger ----------------------------------------------------------------
job_file 1
job_file 2
# Ports below 32768, out of the ephemeral range that client sockets take.
start_staggerd --port-range 28000-28999
$stagger job create local/bench/prod/fleet "$tmp/v1.json" >/dev/null
i=0
until [ "$($stagger job status local/bench/prod/fleet | grep -c ' RUNNING ')" -eq "$N" ]; do
  i=$((i + 1)); [ "$i" -lt 600 ] || { echo "the instances did not come up" >&2; exit 1; }; sleep 0.1
done

# The physical limit of a run from the "ready:" lines of its version-2
# instances (read from stdin): per batch of B instances in instance order,
# the slowest from start to first passing health check, summed.
limit () {
  awk -v B="$B" '$1 == "ready:" && $3 == "2" {
      d = $9 - $7; i = $5; if (!(i in t) || d > t[i]) t[i] = d }
    END { for (i in t) { b = int(i / B); if (t[i] > m[b]) m[b] = t[i] }
          s = 0; for (b in m) s += m[b]; printf "%.3f\n", s }'
}

cpu0=$(ticks "$daemon")
t0=$(now)
$stagger update start local/bench/prod/fleet "$tmp/v2.json" --wait >"$tmp/update.log"
t1=$(now)
cpu1=$(ticks "$daemon")
hz=$(getconf CLK_TCK)
stagger_wall=$(calc "$t1 - $t0")
stagger_cpu=$(calc "($cpu1 - $cpu0) / $hz")
stagger_limit=$(find "$tmp/data/sandboxes" -name stdout -exec cat {} + | limit)
# The update's own timeline: its time and physical limit as staggerd saw
# them (from its task events: each start to the health check it saw pass).
$stagger --json update timeline local/bench/prod/fleet >"$tmp/timeline.json"
# Top-level members are the ones indented by two spaces.
timeline_took=$(awk -F' : ' '/^  "from_ms"/ { f = $2 + 0 } /^  "to_ms"/ { t = $2 + 0 }
  END { printf "%.3f\n", (t - f) / 1000 }' "$tmp/timeline.json")
timeline_limit=$(awk -F' : ' '/^  "limit_ms"/ { printf "%.3f\n", ($2 + 0) / 1000 }' \
  "$tmp/timeline.json")
$stagger job kill local/bench/prod/fleet >/dev/null
sleep 2

# ---- the script a user would write ------------------------------------------
base=29000
start_one () {   # $1: instance, $2: version; the server is nobody's child here
  ( STAGGER_VERSION=$2 STAGGER_INSTANCE=$1 \
      "$server" --port $((base + $1)) >>"$tmp/out.$1" 2>&1 &
    echo $! > "$tmp/pid.$1" )
}
gone () {        # $1: pid; a process that has exited (or is a zombie)
  while [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; do
    sleep 0.05
  done
}
healthy () {     # $1: instance
  until curl -sf -o /dev/null "http://127.0.0.1:$((base + $1))/health"; do sleep 0.1; done
}
replace () {     # $1: instance: stop the old process, start version 2, wait for its health
  p=$(cat "$tmp/pid.$1"); kill "$p"; gone "$p"; start_one "$1" 2; healthy "$1"
}
start_all () {   # version 1 everywhere, healthy
  rm -f "$tmp"/out.*
  i=0
  while [ "$i" -lt "$N" ]; do start_one "$i" 1; i=$((i + 1)); done
  i=0
  while [ "$i" -lt "$N" ]; do healthy "$i"; i=$((i + 1)); done
}
stop_all () {
  i=0
  while [ "$i" -lt "$N" ]; do kill "$(cat "$tmp/pid.$i")" 2>/dev/null || true; i=$((i + 1)); done
  i=0
  while [ "$i" -lt "$N" ]; do gone "$(cat "$tmp/pid.$i")"; i=$((i + 1)); done
}
run_script () {  # $1: parallel or serial; sets script_wall and script_limit
  start_all
  t0=$(now)
  first=0
  while [ "$first" -lt "$N" ]; do
    last=$((first + B - 1)); [ "$last" -lt "$N" ] || last=$((N - 1))
    i=$first
    jobs=
    while [ "$i" -le "$last" ]; do
      if [ "$1" = parallel ]; then replace "$i" & jobs="$jobs $!"; else replace "$i"; fi
      i=$((i + 1))
    done
    # shellcheck disable=SC2086
    [ -z "$jobs" ] || wait $jobs
    first=$((last + 1))
  done
  t1=$(now)
  script_wall=$(calc "$t1 - $t0")
  script_limit=$(cat "$tmp"/out.* | limit)
  stop_all
}

run_script parallel
par_wall=$script_wall
par_limit=$script_limit
if [ -n "$SERIAL" ]; then
  run_script serial
  ser_wall=$script_wall
  ser_limit=$script_limit
fi

ratio=$(calc "$stagger_wall / $par_wall")
stagger_phys=$(calc "$stagger_wall / $stagger_limit")
par_phys=$(calc "$par_wall / $par_limit")
verdict=$(calc "$ratio <= 1.10")
[ "$verdict" -eq 1 ] && verdict=met || verdict=missed
printf '%-44s %10s %10s %10s\n' "rollout of $N instances, batches of $B" "seconds" "limit s" "x limit"
printf '%-44s %10.2f %10.2f %10.2f\n' "stagger (update start --wait)" "$stagger_wall" \
  "$stagger_limit" "$stagger_phys"
printf '%-44s %10.2f %10.2f %10.2f\n' "stagger, its timeline (update timeline)" \
  "$timeline_took" "$timeline_limit" "$(calc "$timeline_took / $timeline_limit")"
printf '%-44s %10.2f %10.2f %10.2f\n' "script, a batch's instances in parallel" "$par_wall" \
  "$par_limit" "$par_phys"
if [ -n "$SERIAL" ]; then
  printf '%-44s %10.2f %10.2f %10.2f\n' "script, one instance after another" "$ser_wall" \
    "$ser_limit" "$(calc "$ser_wall / $ser_limit")"
fi
printf '%-44s %10.3f   (target: at most 1.10, %s)\n' "ratio stagger / parallel script" "$ratio" \
  "$verdict"
printf '%-44s %10.2f\n' "staggerd CPU during the rollout" "$stagger_cpu"
if [ -n "$JSON" ]; then
  printf '{"instances": %d, "batch": %d, "stagger_wall_s": %.3f, "stagger_limit_s": %.3f, "stagger_x_limit": %.3f, "script_wall_s": %.3f, "script_limit_s": %.3f, "script_x_limit": %.3f, "ratio": %.3f, "stagger_cpu_s": %.3f, "timeline_s": %.3f, "timeline_limit_s": %.3f%s}\n' \
    "$N" "$B" "$stagger_wall" "$stagger_limit" "$stagger_phys" "$par_wall" "$par_limit" \
    "$par_phys" "$ratio" "$stagger_cpu" "$timeline_took" "$timeline_limit" \
    "${SERIAL:+, \"serial_script_wall_s\": ${ser_wall:-0}}" > "$JSON"
fi
