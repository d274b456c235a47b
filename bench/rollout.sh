#!/bin/sh
# rollout.sh: an end-to-end rollout of real processes, and the same rollout
# done by hand, in one run.
#
#   BUILDDIR=... bench/rollout.sh [--instances N] [--batch B] [--json FILE]
#
# Stagger: a real staggerd with the local runtime rolls N instances of
# stagger-example-server (HTTP health check every 0.1 s, watch time 0,
# batches of B) to a new version; we time `stagger update start --wait` and
# read staggerd's CPU time from /proc. Baseline: the shell script a user
# would write without Stagger, on the same kind of processes: for each
# batch, stop the old processes, start the new ones, and poll each /health
# with curl every 0.1 s until it answers. Prints both wall times, the ratio
# and Stagger's CPU time.
set -eu

N=200
B=20
JSON=
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) N=$2; shift 2 ;;
    --batch) B=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "rollout.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${BUILDDIR:?set BUILDDIR to the build tree}"
. "$(dirname "$0")/common.sh"
server="$BUILDDIR/stagger-example-server"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stagger-rollout-XXXXXX")
daemon=
pids=

now () { date +%s.%N; }
ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

cleanup () {
  [ -n "$daemon" ] && { $stagger job kill local/bench/prod/fleet >/dev/null 2>&1 || true; sleep 1;
                        kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; }
  for p in $pids; do kill "$p" 2>/dev/null || true; done
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

cpu0=$(ticks "$daemon")
t0=$(now)
$stagger update start local/bench/prod/fleet "$tmp/v2.json" --wait >"$tmp/update.log"
t1=$(now)
cpu1=$(ticks "$daemon")
hz=$(getconf CLK_TCK)
stagger_wall=$(calc "$t1 - $t0")
stagger_cpu=$(calc "($cpu1 - $cpu0) / $hz")
$stagger job kill local/bench/prod/fleet >/dev/null
sleep 2

# ---- the script a user would write ------------------------------------------
base=29000
start_one () {   # $1: instance, $2: version
  V=$2 "$server" --port $((base + $1)) >/dev/null 2>&1 &
  echo $! > "$tmp/pid.$1"
}
healthy () {     # $1: instance
  until curl -sf -o /dev/null "http://127.0.0.1:$((base + $1))/health"; do sleep 0.1; done
}
i=0
while [ "$i" -lt "$N" ]; do start_one "$i" 1; i=$((i + 1)); done
i=0
while [ "$i" -lt "$N" ]; do healthy "$i"; i=$((i + 1)); done

t0=$(now)
first=0
while [ "$first" -lt "$N" ]; do
  last=$((first + B - 1)); [ "$last" -lt "$N" ] || last=$((N - 1))
  i=$first
  while [ "$i" -le "$last" ]; do kill "$(cat "$tmp/pid.$i")"; i=$((i + 1)); done
  i=$first
  while [ "$i" -le "$last" ]; do
    p=$(cat "$tmp/pid.$i"); while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
    start_one "$i" 2; i=$((i + 1))
  done
  i=$first
  while [ "$i" -le "$last" ]; do healthy "$i"; i=$((i + 1)); done
  first=$((last + 1))
done
t1=$(now)
script_wall=$(calc "$t1 - $t0")
i=0
while [ "$i" -lt "$N" ]; do pids="$pids $(cat "$tmp/pid.$i")"; i=$((i + 1)); done

ratio=$(calc "$stagger_wall / $script_wall")
verdict=$(calc "$ratio <= 1.10")
[ "$verdict" -eq 1 ] && verdict=met || verdict=missed
printf '%-40s %10s\n' "rollout of $N instances, batches of $B" "seconds"
printf '%-40s %10.2f\n' "stagger (update start --wait)" "$stagger_wall"
printf '%-40s %10.2f\n' "shell script baseline" "$script_wall"
printf '%-40s %10.3f   (target: at most 1.10, %s)\n' "ratio stagger / script" "$ratio" "$verdict"
printf '%-40s %10.2f\n' "staggerd CPU during the rollout" "$stagger_cpu"
if [ -n "$JSON" ]; then
  printf '{"instances": %d, "batch": %d, "stagger_wall_s": %.3f, "script_wall_s": %.3f, "ratio": %.3f, "stagger_cpu_s": %.3f}\n' \
    "$N" "$B" "$stagger_wall" "$script_wall" "$ratio" "$stagger_cpu" > "$JSON"
fi
