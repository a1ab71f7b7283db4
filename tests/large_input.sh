#!/usr/bin/env bash
# Large inputs: a 100 MB valid module is checked to the end, and 100 MB of garbage stops with
# clear diagnostics; neither may crash. Run on an optimised build (scripts/test does), since
# a sanitizer build needs minutes and several GB for the valid module.
set -u
ptxforge=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; passed=0
python3 - "$tmp/big.ptx" <<'PY'
import sys
body = "".join(f"\tadd.s32 %r{(i % 8) + 1}, %r{((i + 1) % 8) + 1}, {i % 1000};\n" for i in range(8000))
init = "\tmov.u32 %r1, 0;\n" + "".join(f"\tmov.u32 %r{j}, {j};\n" for j in range(2, 10))
with open(sys.argv[1], "w") as f:
    f.write(".version 8.0\n.target sm_90a\n.address_size 64\n")
    size, k = 0, 0
    while size < 100_000_000:
        fn = f".visible .entry k{k}()\n{{\n\t.reg .b32 %r<10>;\n{init}{body}\tret;\n}}\n"
        f.write(fn)
        size += len(fn)
        k += 1
PY
start=$(date +%s)
out=$("$ptxforge" check "$tmp/big.ptx" 2>&1); rc=$?
echo "100 MB valid module: exit $rc in $(( $(date +%s) - start )) s: $(tail -c 200 <<<"$out")"
if [[ $rc -eq 0 && $out == *": ok"* ]]; then passed=$((passed + 1)); else echo "FAIL: the valid 100 MB module was not reported ok"; fail=$((fail + 1)); fi
head -c 100000000 /dev/urandom > "$tmp/garbage.ptx"
start=$(date +%s)
out=$("$ptxforge" check "$tmp/garbage.ptx" 2>&1); rc=$?
echo "100 MB garbage: exit $rc in $(( $(date +%s) - start )) s, $(grep -c 'error:' <<<"$out") errors shown"
if [[ $rc -eq 1 && $out == *"error"* ]]; then passed=$((passed + 1)); else echo "FAIL: garbage did not give errors with exit 1"; fail=$((fail + 1)); fi
echo "$passed passed, $fail failed"
[[ $fail -eq 0 ]]
