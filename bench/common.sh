# common.sh: what the benchmark scripts share (sourced, not run).
# Needs BUILDDIR set, and tmp (a scratch folder) before any function runs.

# Starts staggerd with "$@" on free ports; sets daemon (its pid), port (HTTP)
# and stagger (the CLI, pointed at it).
start_staggerd () {
  # As root, the benchmark's instances run as root like the baselines'.
  as_root=
  [ "$(id -u)" -eq 0 ] && as_root=--allow-root-instances
  "$BUILDDIR/staggerd" --data-dir "$tmp/data" --http-port 0 --thrift-port 0 \
    --ready-file "$tmp/ready.json" $as_root "$@" >"$tmp/staggerd.log" 2>&1 &
  daemon=$!
  i=0
  while [ ! -f "$tmp/ready.json" ]; do
    i=$((i + 1)); [ "$i" -lt 300 ] || { echo "staggerd did not start" >&2; exit 1; }; sleep 0.1
  done
  port=$(sed -e 's/.*"http_port" *: *\([0-9]*\).*/\1/' "$tmp/ready.json")
  stagger="$BUILDDIR/stagger --url http://127.0.0.1:$port"
}

# Stops what start_staggerd started: first the jobs named ("$@": their
# keys), waiting up to 10 s for each to be gone (staggerd leaves a local
# job's instances running when it stops), then staggerd. Nothing when it
# is not running.
stop_staggerd () {
  [ -n "${daemon:-}" ] || return 0
  for key in "$@"; do
    $stagger job kill "$key" >/dev/null 2>&1 || true
    i=0; while [ "$i" -lt 100 ] && $stagger job status "$key" >/dev/null 2>&1; do
      i=$((i + 1)); sleep 0.1
    done
  done
  kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true
  daemon=
}

# Arithmetic on decimals: calc "1.5 / 3".
calc () { awk "BEGIN { print $1 }"; }

now () { date +%s.%N; }

# Three podman services on this machine stand in for hosts, as in
# tests/podman_hosts.c (runc, cgroupfs, host networking, events in a file):
# host N keeps its storage under $tmp/hN (podman refuses a runroot longer
# than 50 characters: keep $tmp short) and serves $tmp/hN/sock.
podargs () {   # $1: host number: its storage and this machine's settings
  echo "--root=$tmp/h$1/s --runroot=$tmp/h$1/r --tmpdir=$tmp/h$1/t --runtime=runc" \
    "--cgroup-manager=cgroupfs --events-backend=file"
}
pod () {   # $1: host number, then podman's arguments
  h=$1; shift
  # shellcheck disable=SC2046
  podman $(podargs "$h") "$@"
}

# Starts the three services and waits until each answers; adds their pids
# to services.
start_podman_hosts () {
  printf '%s\n' '[containers]' 'netns = "host"' \
    'default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]' '[engine]' 'runtime = "runc"' \
    'cgroup_manager = "cgroupfs"' 'events_logger = "file"' > "$tmp/containers.conf"
  export CONTAINERS_CONF="$tmp/containers.conf"
  for h in 0 1 2; do
    mkdir -p "$tmp/h$h/t"
    # shellcheck disable=SC2046
    podman $(podargs "$h") system service --time=0 "unix://$tmp/h$h/sock" >"$tmp/h$h/log" 2>&1 &
    services="$services $!"
  done
  for h in 0 1 2; do
    i=0; until curl -sf --unix-socket "$tmp/h$h/sock" http://d/_ping >/dev/null; do
      i=$((i + 1)); [ "$i" -lt 600 ] || { echo "podman host $h did not start" >&2; exit 1; }; sleep 0.1
    done
  done
}
