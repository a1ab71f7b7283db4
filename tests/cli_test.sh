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
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [[ -x $nvcc ]]; then
  # A module built for debugging (nvcc -G) is assembled the way nvcc does it, at -O0.
  printf '__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n' > "$tmp/debug.cu"
  if "$nvcc" -G -ptx -arch=sm_90 "$tmp/debug.cu" -o "$tmp/debug.ptx" 2>/dev/null; then
    expect 0 "ptxas sm_90: ok" check --ptxas "$tmp/debug.ptx"
  fi
fi
expect 1 "undeclared-reg" check "$root/examples/broken_vector_add.ptx"
expect 1 '"check": "undeclared-reg"' check --format json "$root/examples/broken_vector_add.ptx"
: > "$tmp/empty.ptx"
expect 1 "missing .version directive" check "$tmp/empty.ptx"  # ptxas: "Missing .version directive"
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
# run / suite / doctor: the harness's contract on a machine with or without a GPU.
expect 0 "level1/vector_add" suite list
expect 0 "## Sizes" suite show vector_add
if "$ptxforge" suite show vector_add | grep -qE "odd|1000003|tiny"; then
  echo "FAIL: suite show leaks a held-back size"; fail=$((fail+1)); else passed=$((passed+1)); fi
expect 2 "no task 'vektor_add'.*did you mean 'vector_add'" run vektor_add "$root/examples/vector_add.ptx"
expect 1 "FAILED at check: .*no launch spec" run vector_add "$root/examples/vector_add.ptx"
expect 1 "FAILED at check" run vector_add "$root/examples/broken_vector_add.ptx"
expect 1 "FAILED at check" run vector_add "$tmp/garbage.ptx"
expect 2 "cannot read|No such file" run vector_add "$tmp/missing.ptx"
out=$("$ptxforge" run --no-time vector_add "$root/tasks/level1/vector_add/solution.ptx" 2>&1); rc=$?
if { ((rc == 2)) && grep -q "^verdict: NOT verified on a GPU" <<<"$out"; } || { ((rc == 0)) && grep -q "^verdict: passed" <<<"$out"; }; then
  passed=$((passed+1)); else echo "FAIL: run on the solution: exit $rc"; echo "$out"; fail=$((fail+1)); fi
mkdir -p "$tmp/badtask"; printf 'name = "x"\n[[param]]\nname = "a"\ndtype = "f99"\n' > "$tmp/badtask/task.toml"
expect 2 "task.toml:4:9: error: unknown dtype 'f99'" run "$tmp/badtask" "$root/examples/vector_add.ptx"
expect 0 "usage|Usage" help run
# compile / task new: clear errors, sessions kept.
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL
expect 2 "ANTHROPIC_API_KEY is not set" compile vector_add --model anthropic:some-model --out "$tmp/s1" --no-cache
[[ -f "$tmp/s1/session.json" ]] && passed=$((passed+1)) || { echo "FAIL: the session was not kept"; fail=$((fail+1)); }
expect 2 "unknown model provider 'opnai'.*did you mean 'openai'" compile vector_add --model opnai:x --out "$tmp/s2"
expect 2 "give a task and --model" compile
expect 2 "is not a session folder" compile --resume "$tmp/no-session"
expect 2 "round-01/reply.md" compile vector_add --model manual --out "$tmp/s3"
expect 2 "already holds a session" compile vector_add --model manual --out "$tmp/s3"
printf 'extern "C" __global__ void twice(const float* x, float* y, unsigned n) {\n  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2 * x[i];\n}\n' > "$tmp/twice.cu"
expect 0 "created .*task.toml" task new "$tmp/twice" --from-cuda "$tmp/twice.cu" --entry twice
expect 0 "Entry name: .twice" suite show "$tmp/twice"
expect 2 "no __global__ function 'thrice'" task new "$tmp/thrice" --from-cuda "$tmp/twice.cu" --entry thrice
# fmt keeps comments (the launch spec lives in them); -i with -o, or -i on stdin, is a usage error.
printf '// @launch grid=(1, 1, 1) block=(32, 1, 1)\n.visible .entry k() // kernel\n{\n\tret; // done\n}\n' > "$tmp/launch.ptx"
expect 0 "^// @launch grid=\(1, 1, 1\) block=\(32, 1, 1\)$" fmt --add-header "$tmp/launch.ptx"
expect 0 "ret; // done" fmt --add-header "$tmp/launch.ptx"
cp "$tmp/launch.ptx" "$tmp/inplace.ptx"
expect 0 "" fmt -i --add-header "$tmp/inplace.ptx"
grep -q '^// @launch grid=(1, 1, 1) block=(32, 1, 1)$' "$tmp/inplace.ptx" && grep -q '^\.version' "$tmp/inplace.ptx" &&
  passed=$((passed+1)) || { echo "FAIL: fmt -i lost the @launch line or the header"; cat "$tmp/inplace.ptx"; fail=$((fail+1)); }
expect 2 "give -i or -o, not both" fmt -i -o "$tmp/other.ptx" "$tmp/launch.ptx"
[[ ! -e $tmp/other.ptx ]] && passed=$((passed+1)) || { echo "FAIL: fmt -i -o wrote a file"; fail=$((fail+1)); }
expect 2 "standard input cannot be rewritten in place" fmt -i - </dev/null
echo "$passed passed, $fail failed"
[[ $fail -eq 0 ]]
