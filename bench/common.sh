# common.sh: what the benchmark scripts share (sourced, not run).
# Needs BUILDDIR and tmp (a scratch folder) set.

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

# Arithmetic on decimals: calc "1.5 / 3".
calc () { awk "BEGIN { print $1 }"; }
