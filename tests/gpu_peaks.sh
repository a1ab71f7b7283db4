#!/usr/bin/env bash
# On a GPU: doctor measures the peaks the time stage holds kernels to, in bounds any current
# data-centre GPU meets (loose on purpose: 1-10 TB/s copy, 5-200 TFLOP/s FP32), caches them,
# and reads the cache the second time. Exit 77 (skipped) without a GPU.
set -u
ptxforge=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PTXFORGE_CACHE_DIR="$tmp/cache"
out=$("$ptxforge" doctor --remeasure 2>&1)
if grep -q "^  none: " <<<"$out"; then echo "no GPU: skipped"; exit 77; fi
echo "$out" | sed -n '/^GPU/,/^toolchain/p'
fail=0
rate() {  # rate <label regex> <unit>: the figure after the label, in units of 1e12
  python3 - "$1" "$2" "$out" <<'PY'
import re, sys
label, unit, text = sys.argv[1], sys.argv[2], sys.argv[3]
m = re.search(label + r" ([0-9.e+]+) ([KMGTP]?)" + unit + "/s", text)
if not m: print("none"); sys.exit()
scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[m.group(2)]
print(float(m.group(1)) * scale / 1e12)
PY
}
copy=$(rate "copy" "B"); read_bw=$(rate "read-only" "B"); fma=$(rate "FP32 FMA" "FLOP")
echo "copy ${copy} TB/s, read ${read_bw} TB/s, FP32 ${fma} TFLOP/s"
python3 -c "import sys; c,r,f=map(float,sys.argv[1:]); sys.exit(0 if 1<=c<=10 and 1<=r<=10 and 5<=f<=200 else 1)" "$copy" "$read_bw" "$fma" \
  || { echo "FAIL: peaks out of bounds"; fail=1; }
ls "$tmp"/cache/peaks/*.json >/dev/null 2>&1 || { echo "FAIL: no cache file"; fail=1; }
again=$("$ptxforge" doctor 2>&1)
grep -q "peaks (cached in " <<<"$again" || { echo "FAIL: the second doctor did not read the cache"; echo "$again" | head -20; fail=1; }
exit $fail
