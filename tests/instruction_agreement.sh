#!/usr/bin/env bash
# Single instructions against ptxas: each line of tests/handwritten/instructions.txt is wrapped
# in a kernel and judged by `ptxforge check` and by ptxas. We must never reject what ptxas
# accepts (a false alarm fails the test); what ptxas rejects and we accept is listed as missed.
set -u
ptxforge=$1; list=$2
ptxas=${PTXFORGE_CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[[ -x $ptxas ]] || ptxas=$(command -v ptxas) || { echo "SKIP: ptxas not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
agree=0; false_alarms=0; missed=0; both=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  printf '.version 8.6\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.maxnreg 128\n{\n.reg .b32 %%r<8>;\n.reg .b64 %%rd<8>;\n.reg .b16 %%h<8>;\n.reg .f32 %%f<8>;\n.reg .f64 %%fd<8>;\n.reg .pred %%p<8>;\n%s\nret;\n}\n' "$line" > "$tmp/k.ptx"
  "$ptxas" -arch=sm_90a "$tmp/k.ptx" -o /dev/null 2>"$tmp/ptxas.txt"; theirs=$?
  "$ptxforge" check --no-warnings "$tmp/k.ptx" >"$tmp/ours.txt" 2>&1; ours=$?
  if [[ $theirs -eq 0 && $ours -eq 0 ]]; then agree=$((agree + 1))
  elif [[ $theirs -eq 0 ]]; then false_alarms=$((false_alarms + 1)); echo "FALSE ALARM: $line"; grep 'error:' "$tmp/ours.txt" | head -2
  elif [[ $ours -eq 0 ]]; then missed=$((missed + 1)); echo "missed: $line  (ptxas: $(head -1 "$tmp/ptxas.txt" | sed 's/.*: //'))"
  else both=$((both + 1)); fi
done < "$list"
echo "instruction agreement: $agree accepted by both, $both rejected by both, $missed missed, $false_alarms false alarms"
if [[ $false_alarms -eq 0 ]]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
