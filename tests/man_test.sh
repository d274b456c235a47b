#!/bin/sh
# man_test.sh: every manual page is clean under groff's warnings and, when
# mandoc is installed, under mandoc -Tlint. Prints "N passed, N failed".
srcdir=${srcdir:-.}
passed=0
failed=0
for page in "$srcdir"/man/*.[1-8]; do
  [ -f "$page" ] || continue
  out=$(groff -man -ww -z "$page" 2>&1)
  if [ -n "$out" ]; then
    echo "FAIL groff: $page"; echo "$out"; failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
  if command -v mandoc >/dev/null 2>&1; then
    out=$(mandoc -Tlint "$page" 2>&1)
    if [ -n "$out" ]; then
      echo "FAIL mandoc: $page"; echo "$out"; failed=$((failed + 1))
    else
      passed=$((passed + 1))
    fi
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
