#!/bin/sh
# sidecars.sh: a sidecar set's rollout across the pods of a job on three
# podman hosts by staggerd --runtime=fleet (a hot upgrade), and the same
# upgrade done by a shell script with `podman --url` (the sidecar container
# stopped and started again), in one run, while a client keeps sending
# requests through every sidecar.
#
#   BUILDDIR=... bench/sidecars.sh [--instances N] [--batch B] [--json FILE]
#
# Three `podman system service` processes on this machine stand in for the
# hosts (as in bench/fleet.sh), with two images built from busybox-static:
# httpd, and stg-test-proxy (tests/sidecar_proxy.c, `make
# tests/stg-test-proxy`), an Envoy-like proxy that relays its port to the
# application beside it. Stagger: a job of N pods (default 30), each
# httpd and the proxy of a sidecar set (hot_upgrade, its listening socket
# held by the pod's anchor); we time `stagger sidecar apply v2 --wait`,
# B instances at a time (max_unavailable, default 3). Baseline: the script a
# competent user writes for the same containers (an httpd and a proxy per
# instance, made by `podman --url ... run`): for each batch, every instance
# of the batch at once (`&`, then `wait`): `podman --url ... stop` the old
# proxy (it finishes the connections it has), `rm` it, `run` the new one
# and poll its port with curl until it answers. On both sides a client
# (curl, one request after another, round the N proxies) counts the
# requests that fail during the upgrade. Prints the wall times, Stagger's
# ratio to the script, and the failed requests of each. Needs root,
# podman, runc, busybox-static and curl.
set -eu

N=30
B=3
JSON=
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) N=$2; shift 2 ;;
    --batch) B=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "sidecars.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${BUILDDIR:?set BUILDDIR to the build tree}"
for p in podman runc curl; do
  command -v "$p" >/dev/null || { echo "sidecars.sh: needs $p (scripts/install-deps.sh)" >&2; exit 1; }
done
[ -x /bin/busybox ] || { echo "sidecars.sh: needs busybox-static" >&2; exit 1; }
PROXY="$BUILDDIR/tests/stg-test-proxy"
[ -x "$PROXY" ] || { echo "sidecars.sh: needs $PROXY (make tests/stg-test-proxy)" >&2; exit 1; }
[ -x "$BUILDDIR/stagger-anchor" ] || { echo "sidecars.sh: needs $BUILDDIR/stagger-anchor" >&2; exit 1; }
. "$(dirname "$0")/common.sh"
# podman refuses a runroot longer than 50 characters: keep paths short.
tmp=$(mktemp -d /tmp/ssb-XXXXXX)
daemon=
services=
client=
PORTS=27000   # below 32768: out of the ephemeral range, which clients use

url () { echo "unix://$tmp/h$(($1 % 3))/sock"; }   # $1: instance: its host's engine

stop_client () {
  [ -n "$client" ] || return 0
  kill "$client" 2>/dev/null || true
  wait "$client" 2>/dev/null || true
  client=
}
rm_all () {   # a pod's containers before its anchor, which podman wants
  for h in 0 1 2; do
    pod $h rm --force --time=0 --filter label=org.stagger.role=sidecar >/dev/null 2>&1 || true
    pod $h rm --force --time=0 --filter label=org.stagger.role=main >/dev/null 2>&1 || true
    pod $h rm --all --force --time=0 >/dev/null 2>&1 || true
  done
}
cleanup () {
  stop_client
  stop_staggerd
  [ -d "$tmp/h0/s" ] && rm_all
  for p in $services; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  grep " $tmp/" /proc/self/mounts | awk '{ print $2 }' | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

image () {   # $1: version
  rm -rf "$tmp/rootfs" && mkdir -p "$tmp/rootfs/bin" "$tmp/rootfs/www" "$tmp/rootfs/tmp"
  cp /bin/busybox "$PROXY" "$tmp/rootfs/bin/"
  for a in sh httpd sleep; do ln -s busybox "$tmp/rootfs/bin/$a"; done
  echo ok > "$tmp/rootfs/www/health" && printf '%s' "$1" > "$tmp/rootfs/www/version"
  tar -C "$tmp/rootfs" -cf "$tmp/v$1.tar" .
  for h in 0 1 2; do pod $h import --quiet "$tmp/v$1.tar" "localhost/bench:$1" >/dev/null; done
}

# A client: GET /version through each port of $tmp/ports in turn, one
# request at a time, until killed; a request that fails adds a line to
# $tmp/failed.
start_client () {
  : > "$tmp/failed"
  (
    while :; do
      while read -r p; do
        curl -sf -m 10 -o /dev/null "http://127.0.0.1:$p/version" || echo "$p" >> "$tmp/failed"
      done < "$tmp/ports"
    done
  ) &
  client=$!
}

start_podman_hosts
image 1
image 2

# ---- Stagger ----------------------------------------------------------------
cat > "$tmp/job.json" <<EOF
{
  "cluster": "local", "role": "bench", "environment": "prod", "name": "web",
  "instances": $N,
  "resources": {"ports": ["http"]},
  "container": {"docker": {"image": "localhost/bench:1",
                           "parameters": [{"name": "network", "value": "host"}]}},
  "task": {"argv": ["httpd", "-f", "-p", "{{ports[http]}}", "-h", "/www"], "stop_timeout_secs": 2},
  "health_check_config": {"health_checker": {"http": {"endpoint": "/health"}}, "timeout_secs": 5,
                          "initial_interval_secs": 30, "interval_secs": 0.2}
}
EOF
set_file () {   # $1: version
  cat > "$tmp/proxy-v$1.json" <<EOF
{
  "cluster": "local", "name": "proxy",
  "selector": {"role": "bench", "environment": "prod", "name": "web"},
  "image": "localhost/bench:$1", "ports": ["proxy"], "socket_activation": true,
  "task": {"command": "stg-test-proxy \$PORT_HTTP", "hot_upgrade": true, "stop_timeout_secs": 5},
  "health_check_config": {"health_checker": {"http": {"endpoint": "/health"}}, "timeout_secs": 5,
                          "initial_interval_secs": 30, "interval_secs": 0.2},
  "update_config": {"max_unavailable": $B, "max_failures": 0}
}
EOF
}
set_file 1
set_file 2
{
  printf '[fleet]\ncall_timeout_secs = 300\nlost_after_secs = 3600\npoll_interval_ms = 500\n'
  for h in 0 1 2; do printf '[host h%s]\nendpoint = unix://%s/h%s/sock\n' "$h" "$tmp" "$h"; done
} > "$tmp/staggerd.conf"
start_staggerd --runtime=fleet --config="$tmp/staggerd.conf" --anchor="$BUILDDIR/stagger-anchor" \
  --port-range "$PORTS-$((PORTS + 4 * N + 3))"
$stagger sidecar apply "$tmp/proxy-v1.json" >/dev/null
$stagger job create local/bench/prod/web "$tmp/job.json" >/dev/null
i=0
until [ "$($stagger job status local/bench/prod/web | grep -c ' RUNNING ')" -eq "$N" ]; do
  i=$((i + 1)); [ "$i" -lt 6000 ] || { echo "the pods did not come up" >&2; exit 1; }; sleep 0.2
done
$stagger job status local/bench/prod/web | grep -o ' proxy=[0-9]*' | cut -d= -f2 > "$tmp/ports"
[ "$(wc -l < "$tmp/ports")" -eq "$N" ] || { echo "not every pod has a proxy port" >&2; exit 1; }
start_client
sleep 1   # the client under way before the upgrade starts
t0=$(now)
$stagger sidecar apply "$tmp/proxy-v2.json" --wait >"$tmp/update.log"
t1=$(now)
stop_client
stagger_wall=$(calc "$t1 - $t0")
stagger_failed=$(wc -l < "$tmp/failed")
kill "$daemon" && wait "$daemon" || true
daemon=
rm_all

# ---- the script a user would write ------------------------------------------
app () { echo $((PORTS + 2 * $1)); }        # $1: instance: its application's port
proxy () { echo $((PORTS + 2 * $1 + 1)); }  # ... and its proxy's
run_proxy () {   # $1: instance, $2: version
  podman --url "$(url "$1")" run --detach --quiet --name "proxy$1" --network host \
    "localhost/bench:$2" stg-test-proxy "$(app "$1")" "$(proxy "$1")" >/dev/null
}
answers () {     # $1: port: until it answers /health
  until curl -sf -o /dev/null "http://127.0.0.1:$1/health"; do sleep 0.2; done
}
replace () {     # $1: instance: the old proxy out, version 2 in, answering
  podman --url "$(url "$1")" stop --time 5 "proxy$1" >/dev/null
  podman --url "$(url "$1")" rm "proxy$1" >/dev/null
  run_proxy "$1" 2
  answers "$(proxy "$1")"
}
: > "$tmp/ports"
i=0
while [ "$i" -lt "$N" ]; do
  podman --url "$(url "$i")" run --detach --quiet --name "app$i" --network host \
    localhost/bench:1 httpd -f -p "$(app "$i")" -h /www >/dev/null
  run_proxy "$i" 1
  proxy "$i" >> "$tmp/ports"
  i=$((i + 1))
done
while read -r p; do answers "$p"; done < "$tmp/ports"
start_client
sleep 1
t0=$(now)
first=0
while [ "$first" -lt "$N" ]; do
  last=$((first + B - 1)); [ "$last" -lt "$N" ] || last=$((N - 1))
  i=$first
  jobs=
  while [ "$i" -le "$last" ]; do replace "$i" & jobs="$jobs $!"; i=$((i + 1)); done
  # shellcheck disable=SC2086
  wait $jobs
  first=$((last + 1))
done
t1=$(now)
stop_client
script_wall=$(calc "$t1 - $t0")
script_failed=$(wc -l < "$tmp/failed")

ratio=$(calc "$stagger_wall / $script_wall")
printf '%-56s %10s %8s\n' "sidecar upgrade of $N pods on 3 hosts, $B at a time" "seconds" "failed"
printf '%-56s %10.2f %8d\n' "stagger sidecar apply --wait (hot upgrade)" "$stagger_wall" \
  "$stagger_failed"
printf '%-56s %10.2f %8d\n' "script: podman --url stop, rm, run the proxy" "$script_wall" \
  "$script_failed"
printf '%-56s %10.3f\n' "ratio stagger / script" "$ratio"
if [ -n "$JSON" ]; then
  printf '{"instances": %d, "batch": %d, "hosts": 3, "stagger_wall_s": %.3f, "script_wall_s": %.3f, "ratio": %.3f, "stagger_failed": %d, "script_failed": %d}\n' \
    "$N" "$B" "$stagger_wall" "$script_wall" "$ratio" "$stagger_failed" "$script_failed" > "$JSON"
fi
