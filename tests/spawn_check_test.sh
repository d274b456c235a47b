#!/bin/sh
# spawn_check_test.sh: scripts/spawn-check passes on this tree's src/, and
# fails on a tree where something other than src/spawn/spawn.c forks,
# execs or uses GSubprocess, naming the line; comments do not count.
# Prints "N passed, N failed".
srcdir=${srcdir:-.}
check="$srcdir/scripts/spawn-check"
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $1"; failed=$((failed + 1)); }

# The real tree is clean.
if out=$("$check" "$srcdir/src" 2>&1); then ok; else bad "the tree itself: $out"; fi

# A tree with one offending line: the check fails and names it.
offends() {
  rm -rf "$tmp/src"
  mkdir -p "$tmp/src/spawn" "$tmp/src/api"
  printf 'void f (void) { pid_t p = fork (); execve (a, b, c); }\n' >"$tmp/src/spawn/spawn.c"
  printf '/* a file */\n%s\n' "$1" >"$tmp/src/api/x.c"
  if out=$("$check" "$tmp/src" 2>&1); then
    bad "not caught: $1"
  elif echo "$out" | grep -q "src/api/x.c:2:"; then
    ok
  else
    bad "caught without naming the line: $1: $out"
  fi
}
offends '  pid_t p = fork ();'
offends '  execv ("/proc/self/exe", argv);'
offends '  execvp(argv[0], argv);'
offends '  posix_spawn (&pid, path, NULL, NULL, argv, envp);'
offends '  g_spawn_async (NULL, argv, NULL, 0, NULL, NULL, NULL, NULL);'
offends '  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (0);'
offends '  GSubprocess *proc;'
offends '  FILE *f = popen ("ls", "r");'
offends '  syscall (SYS_clone3, &args, sizeof args);'

# Comments and look-alike names are not calls.
rm -rf "$tmp/src"
mkdir -p "$tmp/src/api"
cat >"$tmp/src/api/y.c" <<'C'
/* Nothing here may fork () or execv () by itself,
 * nor use g_subprocess_new (). */
// not popen () either
static int refork (int x);
static int stg_store_system (void);
C
if out=$("$check" "$tmp/src" 2>&1); then ok; else bad "comments counted: $out"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
