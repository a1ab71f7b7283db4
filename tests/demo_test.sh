#!/usr/bin/env bash
# scripts/demo's build shows its progress: build_with_progress (sourced from scripts/demo) on a
# small CMake project of 30 steps prints ninja's [done/total] steps — in a log a few lines
# (every 10%, ending at 100%), on a terminal one line redrawn in place — keeps every line in
# build.log, and on a failing build returns non-zero with the compiler's error shown.
# Usage: demo_test.sh REPO_ROOT. Exit 77 without cmake, ninja or a C compiler.
set -u
root=$1
for t in cmake ninja cc; do command -v $t >/dev/null || { echo "no $t: skipping"; exit 77; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# Sourcing runs nothing (main only runs when the file is executed).
sourced=$(bash -c "source '$root/scripts/demo'; declare -F build_with_progress" 2>&1)
check "sourcing scripts/demo only defines its functions" "[[ '$sourced' == build_with_progress ]]"

project() {  # folder, whether one file is broken
  mkdir -p "$1"
  {
    echo 'cmake_minimum_required(VERSION 3.16)'
    echo 'project(progress C)'
    printf 'add_library(many STATIC'
    for i in $(seq 28); do printf ' f%d.c' "$i"; done
    echo ')'
  } >"$1/CMakeLists.txt"
  for i in $(seq 28); do echo "int f$i(int x) { return x + $i; }" >"$1/f$i.c"; done
  [[ $2 == broken ]] && echo 'int f7(int x) { return x + ; }' >"$1/f7.c"
  return 0
}

# 1. In a log (stdout not a terminal): a few progress lines, the last at 100%.
project "$tmp/ok" fine
(source "$root/scripts/demo" && build_with_progress "$tmp/ok" "$tmp/ok/build") >"$tmp/log.out" 2>&1
rc=$?
cat "$tmp/log.out"
lines=$(grep -cE '^  \[[0-9]+/[0-9]+\] +[0-9]+%  [0-9]+m[0-9]{2}s' "$tmp/log.out")
check "the build succeeds" "((rc == 0))"
check "it says what it builds and how long it takes" "grep -q 'the first build takes 5-7 minutes' '$tmp/log.out'"
check "progress lines appear (got $lines)" "((lines >= 3))"
check "throttled: fewer lines than the 30 steps (got $lines)" "((lines <= 13))"
check "the last progress line is 100%" "grep -E '^  \[' '$tmp/log.out' | tail -1 | grep -qE '\[([0-9]+)/\1\] 100%'"
check "it ends with the time it took" "tail -1 '$tmp/log.out' | grep -qE '^built in [0-9]+m[0-9]{2}s$'"
check "no carriage return in a log" "! grep -q \$'\\r' '$tmp/log.out'"
check "every step is in build.log" "(( \$(grep -cE '^\[[0-9]+/[0-9]+\] ' '$tmp/ok/build/build.log') >= 29 ))"

# 2. On a terminal (script(1) gives it one): one line redrawn with \r, ending at 100%.
if command -v script >/dev/null; then
  project "$tmp/tty" fine
  script -qec "bash -c 'source \"$root/scripts/demo\" && build_with_progress \"$tmp/tty\" \"$tmp/tty/build\"'" /dev/null \
    >"$tmp/tty.out" 2>&1
  rc=$?
  check "on a terminal the build succeeds" "((rc == 0))"
  redraws=$(tr -cd '\r' <"$tmp/tty.out" | wc -c)
  check "on a terminal the line is redrawn in place ($redraws redraws)" "((redraws >= 10))"
  check "on a terminal it reaches 100%" "tr '\r' '\n' <'$tmp/tty.out' | grep -qE '\[([0-9]+)/\1\] 100%'"
fi

# 3. A failing build: non-zero, and the compiler's error is shown.
project "$tmp/bad" broken
(source "$root/scripts/demo" && build_with_progress "$tmp/bad" "$tmp/bad/build") >"$tmp/bad.out" 2>&1
rc=$?
check "a failing build returns non-zero" "((rc != 0))"
check "it says the build failed and shows the error" "grep -q 'the build failed' '$tmp/bad.out' && grep -q 'f7.c' '$tmp/bad.out' && grep -qi 'error' '$tmp/bad.out'"
check "no 'built in' after a failure" "! grep -q '^built in' '$tmp/bad.out'"

exit $fail
