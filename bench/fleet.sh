#!/bin/sh
# fleet.sh: a rollout of containers across three podman hosts by
# staggerd --runtime=fleet, and the same rollout done by a shell script, in
# one run.
#
#   BUILDDIR=... bench/fleet.sh [--instances N] [--batch B] [--interval S] [--serial]
#                               [--json FILE]
#
# Three `podman system service` processes on this machine stand in for the
# hosts (each with its own storage and socket; runc, cgroupfs and host
# networking, as in tests/podman_hosts.c), with two images built from
# busybox-static (httpd and /www/health). Stagger: a job of N containers
# (default 300) rolls to the second image in batches of B (default 30),
# health-checked over HTTP every S seconds (default 0.2; staggerd checks
# every running container that often, the script only those of a batch),
# watch time 0; we time
# `stagger update start --wait`. Baseline: the script a competent user
# writes: for each batch, every container of the batch at once (`&`, then
# `wait`): stop and remove the old container with `podman --url ...
# stop/rm`, run the new one with `podman --url ... run`, poll its /health
# with curl every S seconds too. With --serial, also the script that does a
# batch's containers one after another (a second row; each stop waits its
# 2 s). Prints the wall times and Stagger's ratio to each. Needs root,
# podman, runc, busybox-static and curl.
set -eu

N=300
B=30
S=0.2
JSON=
SERIAL=
while [ $# -gt 0 ]; do
  case "$1" in
    --serial) SERIAL=1; shift ;;
    --instances) N=$2; shift 2 ;;
    --batch) B=$2; shift 2 ;;
    --interval) S=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "fleet.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${BUILDDIR:?set BUILDDIR to the build tree}"
for p in podman runc curl; do
  command -v "$p" >/dev/null || { echo "fleet.sh: needs $p (scripts/install-deps.sh)" >&2; exit 1; }
done
[ -x /bin/busybox ] || { echo "fleet.sh: needs busybox-static" >&2; exit 1; }
. "$(dirname "$0")/common.sh"
# podman refuses a runroot longer than 50 characters: keep paths short.
tmp=$(mktemp -d /tmp/sfb-XXXXXX)
daemon=
services=
PORTS=27000   # below 32768: host ports out of the ephemeral range, which clients use


cleanup () {
  stop_staggerd
  for h in 0 1 2; do [ -d "$tmp/h$h/s" ] && pod $h rm --all --force --time=0 >/dev/null 2>&1 || true; done
  for p in $services; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  grep " $tmp/" /proc/self/mounts | awk '{ print $2 }' | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

image () {   # $1: version
  rm -rf "$tmp/rootfs" && mkdir -p "$tmp/rootfs/bin" "$tmp/rootfs/www" "$tmp/rootfs/tmp"
  cp /bin/busybox "$tmp/rootfs/bin/" && for a in sh httpd sleep; do ln -s busybox "$tmp/rootfs/bin/$a"; done
  echo ok > "$tmp/rootfs/www/health" && printf '%s' "$1" > "$tmp/rootfs/www/version"
  tar -C "$tmp/rootfs" -cf "$tmp/v$1.tar" .
  for h in 0 1 2; do pod $h import --quiet "$tmp/v$1.tar" "localhost/bench:$1" >/dev/null; done
}

start_podman_hosts
image 1
image 2

job_file () {   # $1: version
  cat > "$tmp/v$1.json" <<EOF
{
  "cluster": "local", "role": "bench", "environment": "prod", "name": "fleet",
  "instances": $N,
  "resources": {"ports": ["http"]},
  "container": {"docker": {"image": "localhost/bench:$1",
                           "parameters": [{"name": "network", "value": "host"}]}},
  "task": {"argv": ["httpd", "-f", "-p", "{{ports[http]}}", "-h", "/www"], "stop_timeout_secs": 2},
  "health_check_config": {"health_checker": {"http": {"endpoint": "/health"}}, "timeout_secs": 5,
                          "initial_interval_secs": 30, "interval_secs": $S},
  "update_config": {"watch_secs": 0, "update_strategy": {"batch": {"batch_size": $B}},
                    "max_total_failures": 0, "rollback_on_failure": true}
}
EOF
}

# ---- Stagger ----------------------------------------------------------------
job_file 1
job_file 2
{
  printf '[fleet]\ncall_timeout_secs = 300\nlost_after_secs = 3600\n'
  for h in 0 1 2; do printf '[host h%s]\nendpoint = unix://%s/h%s/sock\n' "$h" "$tmp" "$h"; done
} > "$tmp/staggerd.conf"
start_staggerd --runtime=fleet --config="$tmp/staggerd.conf" --port-range "$PORTS-$((PORTS + N - 1))"
$stagger job create local/bench/prod/fleet "$tmp/v1.json" >/dev/null
i=0
until [ "$($stagger job status local/bench/prod/fleet | grep -c ' RUNNING ')" -eq "$N" ]; do
  i=$((i + 1)); [ "$i" -lt 6000 ] || { echo "the containers did not come up" >&2; exit 1; }; sleep 0.2
done
t0=$(now)
$stagger update start local/bench/prod/fleet "$tmp/v2.json" --wait >"$tmp/update.log"
t1=$(now)
stagger_wall=$(calc "$t1 - $t0")
$stagger job kill local/bench/prod/fleet >/dev/null
i=0
while [ "$(for h in 0 1 2; do pod $h ps --all --quiet; done | wc -l)" -gt 0 ]; do
  i=$((i + 1)); [ "$i" -lt 3000 ] || { echo "the containers were not removed" >&2; exit 1; }; sleep 0.2
done

# ---- the script a user would write ------------------------------------------
base=$PORTS
run_one () {     # $1: instance, $2: version
  podman --url "unix://$tmp/h$(($1 % 3))/sock" run --detach --quiet --name "i$1" --network host \
    "localhost/bench:$2" httpd -f -p $((base + $1)) -h /www >/dev/null
}
healthy () {     # $1: instance
  until curl -sf -o /dev/null "http://127.0.0.1:$((base + $1))/health"; do sleep "$S"; done
}
replace () {     # $1: instance: the old container out, version 2 in, healthy
  podman --url "unix://$tmp/h$(($1 % 3))/sock" stop --time 2 "i$1" >/dev/null
  podman --url "unix://$tmp/h$(($1 % 3))/sock" rm "i$1" >/dev/null
  run_one "$1" 2
  healthy "$1"
}
run_script () {  # $1: parallel or serial; sets script_wall
  i=0
  while [ "$i" -lt "$N" ]; do run_one "$i" 1; i=$((i + 1)); done
  i=0
  while [ "$i" -lt "$N" ]; do healthy "$i"; i=$((i + 1)); done
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
  for h in 0 1 2; do pod $h rm --all --force --time=0 >/dev/null; done
}

run_script parallel
par_wall=$script_wall
if [ -n "$SERIAL" ]; then
  run_script serial
  ser_wall=$script_wall
fi

ratio=$(calc "$stagger_wall / $par_wall")
printf '%-52s %10s\n' "rollout of $N containers on 3 hosts, batches of $B" "seconds"
printf '%-52s %10.2f\n' "stagger --runtime=fleet (update start --wait)" "$stagger_wall"
printf '%-52s %10.2f\n' "script, a batch's containers in parallel" "$par_wall"
[ -z "$SERIAL" ] || printf '%-52s %10.2f\n' "script, one container after another" "$ser_wall"
printf '%-52s %10.3f\n' "ratio stagger / parallel script" "$ratio"
[ -z "$SERIAL" ] ||
  printf '%-52s %10.3f\n' "ratio stagger / serial script" "$(calc "$stagger_wall / $ser_wall")"
if [ -n "$JSON" ]; then
  printf '{"instances": %d, "batch": %d, "hosts": 3, "stagger_wall_s": %.3f, "script_wall_s": %.3f, "ratio": %.3f%s}\n' \
    "$N" "$B" "$stagger_wall" "$par_wall" "$ratio" \
    "${SERIAL:+, \"serial_script_wall_s\": ${ser_wall:-0}}" > "$JSON"
fi
