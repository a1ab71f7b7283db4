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
expect 1 "empty-input" check "$tmp/empty.ptx"          # ptxas rejects an empty file too
printf '  \n\t\n' > "$tmp/blank.ptx"
expect 1 "only whitespace.*empty-input" check "$tmp/blank.ptx"
expect 2 "is a folder" check "$tmp"
expect 2 "is a folder" assemble "$tmp"
{ printf '\xef\xbb\xbf'; cat "$root/examples/vector_add.ptx"; } > "$tmp/bom.ptx"
expect 1 "byte-order-mark" check "$tmp/bom.ptx"
head -c 65536 /dev/urandom > "$tmp/garbage.ptx"
expect 1 "binary-input" check "$tmp/garbage.ptx"
lines=$("$ptxforge" check "$tmp/garbage.ptx" 2>&1 | wc -l)
if ((lines <= 6)); then passed=$((passed+1)); else echo "FAIL: binary input gave $lines lines of diagnostics"; fail=$((fail+1)); fi
if [[ -x /usr/local/cuda/bin/ptxas ]] || command -v ptxas >/dev/null; then
  # ptxas's messages name the user's file, never the private copy ptxas reads.
  expect 1 "file '$tmp/blank.ptx'" check --ptxas --arch sm_90 "$tmp/blank.ptx"
  expect 1 "file '$tmp/blank.ptx'" assemble --arch sm_90 "$tmp/blank.ptx"
  if "$ptxforge" check --ptxas --arch sm_90 "$tmp/blank.ptx" 2>&1 | grep -q "ptxforge-ptxas"; then
    echo "FAIL: check --ptxas shows ptxas's temp path"; fail=$((fail+1)); else passed=$((passed+1)); fi
  # The front-end rules agree with ptxas: it rejects a byte-order mark and an empty file as well.
  expect 1 "ptxas sm_90a: FAILED" check --ptxas "$tmp/bom.ptx"
  expect 1 "ptxas sm_90: FAILED" check --ptxas --arch sm_90 "$tmp/empty.ptx"
  # assemble targets the module's own .target unless told otherwise.
  sed 's/^\.target sm_90a/.target sm_80/' "$root/examples/vector_add.ptx" > "$tmp/sm80.ptx"
  expect 0 "assembled with ptxas for sm_80" assemble "$tmp/sm80.ptx"
  expect 0 "for sm_86" assemble --arch sm_86 "$tmp/sm80.ptx"
fi
# --format json: one document, an array of file records, each diagnostic naming its file.
json_ok() {  # json_ok <python assertion over d> <args...>
  local test=$1; shift
  if "$ptxforge" "$@" 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); assert $test, d" 2>"$tmp/json.err"; then
    passed=$((passed+1)); else echo "FAIL: ptxforge $*: JSON is not as expected"; tail -3 "$tmp/json.err"; fail=$((fail+1)); fi
}
json_ok 'isinstance(d, list) and len(d) == 1 and d[0]["file"].endswith("broken_vector_add.ptx")' check --format json "$root/examples/broken_vector_add.ptx"
json_ok 'all(x["file"] == d[0]["file"] for x in d[0]["diagnostics"]) and d[0]["errors"] > 0' check --format json "$root/examples/broken_vector_add.ptx"
json_ok 'len(d) == 2 and d[1]["readable"] is False and d[1]["diagnostics"][0]["file"] == d[1]["file"] and d[1]["diagnostics"][0]["check"] == "unreadable"' check --format json "$root/examples/vector_add.ptx" "$tmp/missing.ptx"
expect 2 "" check --format json "$root/examples/vector_add.ptx" "$tmp/missing.ptx"
printf '\xff\xfe.version 8.0\n' > "$tmp/nonutf8.ptx"
expect 1 "non-ASCII" check "$tmp/nonutf8.ptx"
{ printf '.version 8.0\n.target sm_90\n.entry k()'; python3 -c "print('{' * 10000 + '}' * 10000)"; } > "$tmp/deep.ptx"
expect 1 "nested more than" check "$tmp/deep.ptx"
printf '.version 8.0\n.target sm_90\n/* never closed\n' > "$tmp/uc.ptx"
expect 1 "unterminated" check "$tmp/uc.ptx"
expect 0 "^\.version 6\.3" fmt --add-header "$root/examples/snippet_no_header.ptx"
# The exit-code rule, command by command: 0 fine, 1 the input has errors, 2 usage or environment.
expect 0 "assembled" assemble "$root/examples/vector_add.ptx" --arch sm_90a
expect 1 "FAILED" assemble "$root/examples/broken_vector_add.ptx" --arch sm_90a
expect 2 "cannot read" assemble "$tmp/missing.ptx"
expect 2 "'sm_9x' is not a target.*did you mean" assemble --arch sm_9x "$root/examples/vector_add.ptx"
expect 2 "'sm_9x' is not a target" check --ptxas --arch sm_9x "$root/examples/vector_add.ptx"
expect 2 "'sm_9x' is not a target" run --arch sm_9x vector_add "$root/examples/vector_add.ptx"
expect 2 "" assemble "$root/examples/vector_add.ptx" --timeout -1
expect 2 "cannot read" fmt "$tmp/missing.ptx"
expect 2 "" fmt --bogus "$root/examples/vector_add.ptx"
expect 2 "" suite --bogus
expect 2 "" doctor --bogus
out=$("$ptxforge" doctor 2>&1); rc=$?
if ((rc == 0 || rc == 2)); then passed=$((passed+1)); else echo "FAIL: doctor exited $rc"; fail=$((fail+1)); fi
expect 2 "" run vector_add "$root/examples/vector_add.ptx" --timeout 0
expect 2 "" task new "$tmp/t0" --from-cuda "$tmp/missing.cu" --entry k
# help and subcommands say the right thing.
expect 0 "usage: ptxforge help" help help
expect 0 "--from-cuda" help task new
expect 0 "--task" help suite validate
expect 2 "unknown command 'bogus'" help bogus
expect 2 "unknown subcommand 'bogus'.*" suite bogus
expect 2 "did you mean 'validate'" suite valdate
expect 2 "did you mean 'new'" task nwe
expect 1 "needs-target" fmt --retarget sm_80 "$root/examples/wgmma_fence.ptx"
# run / suite / doctor: the harness's contract on a machine with or without a GPU.
expect 0 "level1/vector_add" suite list
expect 0 "level3/bgemm_tcgen05 +needs sm_100a " suite list
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
# An unknown key is an error at its line, with a guess: [tolerence] is not silently ignored.
mkdir -p "$tmp/typo" && sed 's/^\[tolerance\]/[tolerence]/' "$root/tasks/level1/vector_add/task.toml" > "$tmp/typo/task.toml"
expect 2 "task.toml:[0-9]+:2: error: unknown key 'tolerence' in the task \(top level\); did you mean 'tolerance'\?" run "$tmp/typo" "$root/examples/vector_add.ptx"
# --allow-suspicious is an option of run and compile; doctor can measure the peaks again.
expect 0 "--allow-suspicious" help run
expect 0 "--allow-suspicious" help compile
expect 0 "--remeasure" help doctor
# fixit: the model and the sessions are required; manual cannot repair a batch.
expect 0 "--keep-unverified" help fixit
expect 2 "" fixit
expect 2 "model" fixit "$tmp"
expect 2 "waits for a reply by hand" fixit --model manual "$tmp"
expect 2 "is not a folder" fixit --model replay:x.json "$tmp/missing-dir"
out=$("$ptxforge" run --no-time --allow-suspicious vector_add "$root/tasks/level1/vector_add/solution.ptx" 2>&1); rc=$?
if { ((rc == 2)) && grep -q "^verdict: NOT verified on a GPU" <<<"$out"; } || { ((rc == 0)) && grep -q "^verdict: passed" <<<"$out"; }; then
  passed=$((passed+1)); else echo "FAIL: run --allow-suspicious: exit $rc"; echo "$out" | head; fail=$((fail+1)); fi
expect 2 "" run --allow-suspicious=maybe vector_add "$root/tasks/level1/vector_add/solution.ptx"
# A suite holding a task that does not load: the input has errors (exit 1).
mkdir -p "$tmp/data/tasks/level1/bad" && cp "$tmp/badtask/task.toml" "$tmp/data/tasks/level1/bad/"
PTXFORGE_DATA_DIR="$tmp/data" expect 1 "INVALID" suite list
PTXFORGE_DATA_DIR="$tmp/data" expect 1 "INVALID" suite validate --no-time
PTXFORGE_DATA_DIR="$tmp/data" expect 1 "unknown dtype" suite show bad
expect 0 "usage|Usage" help run
# suite validate: an unknown task is a usage error; --json is one document.
expect 2 "no task 'vektor_add'.*did you mean 'vector_add'" suite validate --task vektor_add
out=$("$ptxforge" suite validate --task vector_add --no-time --json 2>/dev/null); rc=$?
if python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert d['tasks'][0]['task'] == 'vector_add'" "$out" 2>/dev/null && ((rc == 0 || rc == 2)); then
  passed=$((passed+1)); else echo "FAIL: suite validate --json (exit $rc) is not one JSON document:"; echo "$out" | head -5; fail=$((fail+1)); fi
out=$("$ptxforge" run --json --no-time vector_add "$root/examples/broken_vector_add.ptx" "$root/examples/vector_add.ptx" 2>/dev/null)
if python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert len(d) == 2" "$out" 2>/dev/null; then
  passed=$((passed+1)); else echo "FAIL: run --json with two candidates is not one JSON array"; fail=$((fail+1)); fi
# --seed: the run's base seed, in the report and the JSON record; a bad value is a usage error.
sol="$root/tasks/level1/vector_add/solution.ptx"
for bad in abc -1 1.5 18446744073709551616 0x ''; do
  expect 2 "--seed takes a whole number from 0 to 18446744073709551615.*'$bad'" run --seed "$bad" --no-time vector_add "$sol"
done
expect 2 "--seed takes a whole number" compile vector_add --model manual --seed x1 --out "$tmp/s6"
[[ ! -e "$tmp/s6" ]] && passed=$((passed+1)) || { echo "FAIL: a bad --seed left a session folder"; fail=$((fail+1)); }
expect 2 "give only the session folder" compile --resume "$tmp/s1" --seed 5
out=$("$ptxforge" run --json --no-time --seed 0x10 vector_add "$sol" 2>/dev/null)
if python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert d[0]['seed'] == '16'" "$out" 2>/dev/null; then
  passed=$((passed+1)); else echo "FAIL: run --seed 0x10 --json does not record \"seed\": \"16\""; echo "$out" | head -5; fail=$((fail+1)); fi
out=$("$ptxforge" run --no-time --seed 18446744073709551615 vector_add "$sol" 2>&1)
grep -q "seed 18446744073709551615$" <<<"$(head -1 <<<"$out")" && passed=$((passed+1)) || { echo "FAIL: the report's first line does not name the seed"; echo "$out" | head -3; fail=$((fail+1)); }
s1=$("$ptxforge" run --json --no-time vector_add "$sol" 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['seed'])")
s2=$("$ptxforge" run --json --no-time vector_add "$sol" 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['seed'])")
if [[ -n $s1 && -n $s2 && $s1 != "$s2" ]]; then passed=$((passed+1)); else echo "FAIL: two runs without --seed drew the seeds '$s1' and '$s2'"; fail=$((fail+1)); fi
# A launch spec's expressions may hold spaces anywhere, also outside parentheses and around '='.
{ printf '// @launch grid = (32 + 2 * ceil_div(n, 8192), 1, 1) block=(256, 1, 1) smem=4 * 64\n'; grep -v '@launch' "$root/tasks/level1/vector_add/solution.ptx"; } > "$tmp/spaced.ptx"
out=$("$ptxforge" run --no-time vector_add "$tmp/spaced.ptx" 2>&1)
if grep -q "launch spec: 1 launch" <<<"$out"; then passed=$((passed+1)); else echo "FAIL: a launch spec with spaces"; echo "$out" | head -5; fail=$((fail+1)); fi
# compile / task new: clear errors, sessions kept.
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL
expect 2 "ANTHROPIC_API_KEY is not set" compile vector_add --model anthropic:some-model --out "$tmp/s1" --no-cache
[[ -f "$tmp/s1/session.json" ]] && passed=$((passed+1)) || { echo "FAIL: the session was not kept"; fail=$((fail+1)); }
expect 2 "unknown model provider 'opnai'.*did you mean 'openai'" compile vector_add --model opnai:x --out "$tmp/s2"
[[ ! -e "$tmp/s2" ]] && passed=$((passed+1)) || { echo "FAIL: a bad --model left a session folder"; fail=$((fail+1)); }
expect 2 "sm_9x" compile vector_add --model manual --arch sm_9x --out "$tmp/s4"
expect 2 "unknown hardware profile" compile vector_add --model manual --hardware h999 --out "$tmp/s4"
expect 2 "--price" compile vector_add --model manual --price 2.5 --out "$tmp/s4"
expect 2 "" compile vector_add --model manual --rounds 0 --out "$tmp/s4"
[[ ! -e "$tmp/s4" ]] && passed=$((passed+1)) || { echo "FAIL: a bad option left a session folder"; fail=$((fail+1)); }
expect 2 "give only the session folder" compile vector_add --resume "$tmp/s1"
# Two sessions started in the same second get folders of their own.
(cd "$tmp" && { "$ptxforge" compile vector_add --model manual >"$tmp/c1.out" 2>&1 & "$ptxforge" compile vector_add --model manual >"$tmp/c2.out" 2>&1; wait; })
n=$(ls -d "$tmp"/sessions/vector_add-* 2>/dev/null | wc -l)
if ((n == 2)); then passed=$((passed+1)); else echo "FAIL: two sessions made $n folders"; cat "$tmp/c1.out" "$tmp/c2.out"; fail=$((fail+1)); fi
# A candidate that fails: compile's exit code is 1.
python3 -c "import json; print(json.dumps({'replies': ['\`\`\`ptx\n.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry vector_add() { mov.u32 %r1, 1; ret; }\n\`\`\`\n']}))" > "$tmp/broken-replies.json"
expect 1 "status: not verified" compile vector_add --model "replay:$tmp/broken-replies.json" --rounds 1 --out "$tmp/s5" --no-cache
# fixit --device cpu: the repair verifies on the CPU engine, and the pair says so.
python3 -c "import json,sys; print(json.dumps({'replies': ['\`\`\`ptx\n' + open(sys.argv[1]).read() + '\`\`\`\n']}))" \
  "$root/tasks/level1/vector_add/solution.ptx" > "$tmp/good-replies.json"
expect 0 "repaired: 1 verified \(1 of them on the CPU engine\)" fixit "$tmp/s5" --model "replay:$tmp/good-replies.json" \
  --rounds 1 --device cpu --out "$tmp/fx" -o "$tmp/fx.jsonl"
python3 -c "import json,sys; p=json.loads(open(sys.argv[1]).read()); assert p['verified'] is True and p['verified_by'] == 'cpu_engine', p" \
  "$tmp/fx.jsonl" && passed=$((passed+1)) || { echo "FAIL: fixit --device cpu's pair"; cat "$tmp/fx.jsonl"; fail=$((fail+1)); }
expect 2 "give a task and --model" compile
expect 2 "is not a session folder" compile --resume "$tmp/no-session"
expect 2 "round-01/reply.md" compile vector_add --model manual --out "$tmp/s3"
expect 2 "already holds a session" compile vector_add --model manual --out "$tmp/s3"
printf 'extern "C" __global__ void twice(const float* x, float* y, unsigned n) {\n  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2 * x[i];\n}\n' > "$tmp/twice.cu"
expect 0 "created .*task.toml" task new "$tmp/twice" --from-cuda "$tmp/twice.cu" --entry twice
expect 0 "Entry name: .twice" suite show "$tmp/twice"
expect 2 "no __global__ function 'thrice'" task new "$tmp/thrice" --from-cuda "$tmp/twice.cu" --entry thrice
if [[ -x $nvcc ]]; then
  # Without extern "C" nvcc mangles the name; the task still gets the user's name.
  sed 's/extern "C" //' "$tmp/twice.cu" > "$tmp/mangled.cu"
  expect 0 "created" task new "$tmp/mangled" --from-cuda "$tmp/mangled.cu" --entry twice
  grep -q "^.visible .entry twice(" "$tmp/mangled/solution.ptx" && passed=$((passed+1)) || { echo "FAIL: the mangled kernel's solution.ptx"; fail=$((fail+1)); }
  # nvcc failing is an error, and nothing is written.
  printf 'extern "C" __global__ void k(float* y) { y[0] = no_such_thing; }\n' > "$tmp/broken.cu"
  expect 2 "nvcc could not compile.*" task new "$tmp/broken" --from-cuda "$tmp/broken.cu" --entry k
  [[ ! -e "$tmp/broken/task.toml" ]] && passed=$((passed+1)) || { echo "FAIL: a task was written though nvcc failed"; fail=$((fail+1)); }
fi
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
# A .cu candidate cannot read a file or the environment through the compiler: each include
# trick fails check at its line, and no byte of the canaries (a variable, a task file) appears.
if command -v bwrap >/dev/null && [[ -e /usr/local/cuda/lib64/libnvrtc.so.13 || -n $(ldconfig -p 2>/dev/null | grep libnvrtc.so) ]]; then
  export PTXFORGE_TEST_SECRET=canary-xyz-cli
  printf 'held_back = "canary-xyz-file"\n' > "$tmp/task.toml"
  leak() {  # leak <name> <pattern> <include line>
    printf '// @launch grid=(n+255)/256 block=256\n%s\n' "$3" > "$tmp/$1.cu"
    expect 1 "$2" run vector_add "$tmp/$1.cu"
    grep -q canary-xyz <<<"$out" && { echo "FAIL: $1 leaked a canary:"; echo "$out" | head; fail=$((fail+1)); }
  }
  leak environ_quoted 'include-quoted' '#include "/proc/self/environ"'
  leak environ_angled 'include-path' '#include </proc/self/environ>'
  leak task_absolute 'include-path' "#include <$tmp/task.toml>"
  leak task_relative 'include-path' '#include <../../tasks/level1/vector_add/task.toml>'
  leak computed 'include-computed' "#define F \"$tmp/task.toml\"
#include F"
  leak digraph 'include-digraph' "%:include \"$tmp/task.toml\""
  # A legitimate one still compiles and assembles (verify needs a GPU: exit 0 or 2).
  printf '// @launch grid=(n+255)/256 block=256 args=a,b,c,n\n#include <cuda_fp16.h>\nextern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {\n  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) c[i] = a[i] + b[i];\n}\n' > "$tmp/good.cu"
  out=$("$ptxforge" run vector_add "$tmp/good.cu" 2>&1)
  grep -qE "check +passed" <<<"$out" && grep -qE "assemble +passed" <<<"$out" && passed=$((passed+1)) ||
    { echo "FAIL: a legitimate .cu candidate did not compile:"; echo "$out" | head; fail=$((fail+1)); }
  # Without a sandbox a .cu candidate is refused, saying why.
  PTXFORGE_SANDBOX=none expect 1 "needs the bubblewrap sandbox" run vector_add "$tmp/good.cu"
  unset PTXFORGE_TEST_SECRET
fi
echo "$passed passed, $fail failed"
[[ $fail -eq 0 ]]
