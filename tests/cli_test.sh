#!/usr/bin/env bash
# The CLI contract: exit codes 0/1/2, help, "did you mean", and bad input handled cleanly.
set -u
ptxforge=$1; root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; passed=0
expect() {  # expect <exit code> <pattern or ''> <args...>
  local want=$1 pattern=$2; shift 2
  out=$("$ptxforge" "$@" 2>&1); rc=$?
  if [[ $rc -ne $want ]]; then echo "FAIL: ptxforge $* exited $rc, want $want"; echo "$out" | head -20; fail=$((fail+1)); return; fi
  if [[ -n $pattern ]] && ! grep -qE -- "$pattern" <<<"$out"; then echo "FAIL: ptxforge $*: no /$pattern/ in:"; echo "$out" | head -20; fail=$((fail+1)); return; fi
  passed=$((passed+1))
}
expect 0 "commands:" --help
expect 0 "^data: " --version
expect 2 "commands:"
expect 0 "usage|Usage" help check
expect 2 "did you mean 'check'" chek
expect 2 "did you mean 'fmt'" fnt
expect 2 "cannot read" check "$tmp/missing.ptx"
expect 2 "" check --bogus-flag x.ptx
expect 0 ": ok" check "$root/examples/vector_add.ptx"
expect 1 "undeclared-reg" check "$root/examples/broken_vector_add.ptx"
expect 1 '"check": "undeclared-reg"' check --format json "$root/examples/broken_vector_add.ptx"
: > "$tmp/empty.ptx"
expect 0 "" check "$tmp/empty.ptx"
head -c 65536 /dev/urandom > "$tmp/garbage.ptx"
expect 1 "error" check "$tmp/garbage.ptx"
printf '\xff\xfe.version 8.0\n' > "$tmp/nonutf8.ptx"
expect 1 "non-ASCII" check "$tmp/nonutf8.ptx"
{ printf '.version 8.0\n.target sm_90\n.entry k()'; python3 -c "print('{' * 10000 + '}' * 10000)"; } > "$tmp/deep.ptx"
expect 1 "nested more than" check "$tmp/deep.ptx"
printf '.version 8.0\n.target sm_90\n/* never closed\n' > "$tmp/uc.ptx"
expect 1 "unterminated" check "$tmp/uc.ptx"
expect 0 "^\.version 6\.3" fmt --add-header "$root/examples/snippet_no_header.ptx"
expect 1 "needs-target" fmt --retarget sm_80 "$root/examples/wgmma_fence.ptx"
echo "$passed passed, $fail failed"
[[ $fail -eq 0 ]]
