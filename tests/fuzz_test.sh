#!/bin/sh
# fuzz_test.sh: a short run of each fuzz target from its seed corpus:
# libFuzzer for a few seconds when built with --enable-fuzzing, else the
# replay driver (every seed, cut short and with bytes flipped). Prints
# "N passed, N failed".
srcdir=${srcdir:-.}
passed=0
failed=0
for target in json:json dispatch:binary executor:executor webui:webui thermos:thermos; do
  name=${target%%:*}
  corpus="$srcdir/tests/fuzz/corpus/${target#*:}"
  program=tests/fuzz/fuzz_$name
  if "$program" -help=1 2>&1 | grep -q libFuzzer; then
    work=$(mktemp -d)
    cp "$corpus"/* "$work"/
    if "$program" -max_total_time=10 -timeout=10 -rss_limit_mb=2048 "$work" >"$work.log" 2>&1; then
      echo "PASS fuzz_$name (libFuzzer, 10 s)"; passed=$((passed + 1))
    else
      echo "FAIL fuzz_$name"; tail -40 "$work.log"; failed=$((failed + 1))
    fi
    rm -rf "$work" "$work.log"
  elif out=$("$program" "$corpus" 2>"$program.err"); then
    echo "PASS fuzz_$name ($(echo "$out" | head -1))"; passed=$((passed + 1))
  else
    echo "FAIL fuzz_$name"; tail -40 "$program.err"; failed=$((failed + 1))
  fi
  rm -f "$program.err"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
