#!/bin/sh
# timeline.sh: what an update's timeline costs at scale: a staggerd on the
# simulated runtime rolls N instances in batches of B, then we time its
# /ui/api/timeline answer (median of 5, and its size), `stagger update
# timeline` drawing it, and, when the tests' browser environment is there
# (make check's browser_test installs playwright-core under
# tests/browser-env), the update page in Debian's Chromium until its
# timeline chart is drawn.
#
#   BUILDDIR=... bench/timeline.sh [--instances N] [--batch B] [--json FILE]
set -eu

N=1000
B=50
JSON=
while [ $# -gt 0 ]; do
  case "$1" in
    --instances) N=$2; shift 2 ;;
    --batch) B=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    *) echo "timeline.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${BUILDDIR:?set BUILDDIR to the build tree}"
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stagger-timeline-XXXXXX")
daemon=

cleanup () {
  stop_staggerd local/bench/prod/wide
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

job_file () {   # $1: version
  cat > "$tmp/v$1.json" <<EOF
{
  "cluster": "local", "role": "bench", "environment": "prod", "name": "wide",
  "instances": $N,
  "task": {"argv": ["true"], "env": {"V": "$1"}},
  "update_config": {"watch_secs": 0, "update_strategy": {"batch": {"batch_size": $B}}}
}
EOF
}

job_file 1
job_file 2
start_staggerd --runtime simulated
$stagger job create local/bench/prod/wide "$tmp/v1.json" >/dev/null
$stagger update start local/bench/prod/wide "$tmp/v2.json" --wait >/dev/null
id=$($stagger --json update list local/bench --limit 1 |
  sed -n 's/.*"id" : "\([0-9a-f-]*\)".*/\1/p' | head -n 1)
query="role=bench&environment=prod&name=wide&id=$id"

# /ui/api/timeline: the median of five answers, and the answer's size.
for i in 1 2 3 4 5; do
  curl -s -o "$tmp/timeline.json" -w '%{time_total}\n' "http://127.0.0.1:$port/ui/api/timeline?$query"
done | sort -n > "$tmp/times"
api_ms=$(awk 'NR == 3 { printf "%.1f\n", $1 * 1000 }' "$tmp/times")
api_kb=$(awk '{ n += length($0) + 1 } END { printf "%.0f\n", n / 1024 }' "$tmp/timeline.json")

t0=$(now)
$stagger update timeline local/bench/prod/wide --width 120 >"$tmp/drawn.txt"
t1=$(now)
cli_ms=$(calc "($t1 - $t0) * 1000")
rows=$(grep -c '^[0-9].*|' "$tmp/drawn.txt")

# The page, until its chart says what it drew.
page_ms=-1
env_dir="$BUILDDIR/tests/browser-env"
if [ -d "$env_dir/node_modules/playwright-core" ] && [ -x /usr/bin/chromium ]; then
  cat > "$env_dir/bench_timeline.mjs" <<'EOF'
import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await page.goto(process.argv[2].replace(/#.*/, ''));
await page.waitForSelector('nav');
const t0 = Date.now();
await page.goto(process.argv[2]);
await page.waitForFunction(() => {
  const c = document.querySelector('canvas.timeline-chart');
  return c && c.width > 0 && Number(c.dataset.works) > 0;
}, null, { timeout: 60000, polling: 10 });
console.log(Date.now() - t0);
await browser.close();
EOF
  page_ms=$(node "$env_dir/bench_timeline.mjs" \
    "http://127.0.0.1:$port/#/update/bench/prod/wide/$id")
fi

printf '%-44s %10s\n' "timeline of $N instances, batches of $B" "value"
printf '%-44s %10s\n' "/ui/api/timeline (median of 5), ms" "$api_ms"
printf '%-44s %10s\n' "/ui/api/timeline answer, KiB" "$api_kb"
printf '%-44s %10.1f\n' "stagger update timeline, ms" "$cli_ms"
printf '%-44s %10s\n' "its rows drawn" "$rows"
printf '%-44s %10s\n' "update page to its chart drawn, ms" \
  "$( [ "$page_ms" -ge 0 ] && echo "$page_ms" || echo 'skipped')"
if [ -n "$JSON" ]; then
  printf '{"instances": %d, "batch": %d, "api_ms": %s, "api_kib": %s, "cli_ms": %.1f, "page_ms": %s}\n' \
    "$N" "$B" "$api_ms" "$api_kb" "$cli_ms" "$page_ms" > "$JSON"
fi
