#!/usr/bin/env bash
# GPU test: every complete example in the knowledge (a ```ptx block whose code holds
# `.version`, the rule src/agent/knowledge_test.cpp applies on the CPU) runs and verifies
# against the task its annotation names. The annotation is the line right before the fence:
#   <!-- run: tests/tasks/NAME -->                                   the example has `// @launch` lines
#   <!-- run: tests/tasks/NAME launch="grid=(...) block=(...)" -->   it has none: this is its launch
# The task's path is relative to ROOT. A launch in the annotation goes to `ptxforge run --launch`
# as a TOML file, with the example's `// @scratch` and `// @tensormap` lines beside it.
# One line per example: ok, FAIL, or skip (no GPU: check and assemble passed, nothing ran).
# Exit 1 if an example failed, has no annotation or names a missing task; else 77 (skip) if
# some example could not run for want of a GPU; else 0.
# Usage: run.sh PTXFORGE ROOT
set -u
ptxforge=$1; root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# One spec line's `key=value` pairs as a TOML table of strings; a space inside parentheses
# stays in its value (`grid=(ceil_div(n, 256), 1, 1)`).
toml_table() {
  local table=$1 spec=$2 depth=0 tok="" c i
  echo "[[$table]]"
  for ((i = 0; i <= ${#spec}; i++)); do
    c=${spec:i:1}
    if [[ $c == "(" ]]; then depth=$((depth + 1)); elif [[ $c == ")" ]]; then depth=$((depth - 1)); fi
    if [[ -z $c || ($c == " " && $depth == 0) ]]; then
      if [[ -n $tok ]]; then printf '%s = "%s"\n' "$(trim "${tok%%=*}")" "$(trim "${tok#*=}")"; fi
      tok=""
    else
      tok+=$c
    fi
  done
}

# Collect the examples: (label, annotation line, code) per complete ```ptx block.
labels=(); notes=(); codes=()
while IFS= read -r md; do
  rel=${md#"$root"/}; n=0; in=0; prev=""; lang=""; code=""; fence=0; note=""
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1)); t=$(trim "$line")
    if [[ $t == '```'* ]]; then
      if ((in)); then
        in=0
        if [[ $lang == ptx && $code == *.version* ]]; then labels+=("$rel:$fence"); notes+=("$note"); codes+=("$code"); fi
      else
        in=1; lang=$(trim "${t:3}"); code=""; fence=$n; note=$prev
      fi
    elif ((in)); then
      code+="$line"$'\n'
    fi
    prev=$t
  done <"$md"
done < <(find "$root/knowledge" -name '*.md' ! -name README.md | sort)

if ((${#labels[@]} == 0)); then echo "FAIL no complete example under $root/knowledge"; exit 1; fi
re='^<!--[[:space:]]*run:[[:space:]]*([^[:space:]]+)([[:space:]]+launch="([^"]*)")?[[:space:]]*-->$'
fail=0; skipped=0
for i in "${!labels[@]}"; do
  label=${labels[$i]}; code=${codes[$i]}
  if ! [[ ${notes[$i]} =~ $re ]]; then
    echo "FAIL $label: no '<!-- run: tests/tasks/NAME -->' line right before the example's fence"; fail=1; continue
  fi
  task=${BASH_REMATCH[1]}; launch=${BASH_REMATCH[3]}
  if [[ ! -f $root/$task/task.toml ]]; then echo "FAIL $label: its task $task has no task.toml under $root"; fail=1; continue; fi
  file=$tmp/example$i.ptx
  printf '%s' "$code" >"$file"
  opts=()
  if [[ -n $launch ]]; then
    if grep -q '^[[:space:]]*// @launch' "$file"; then
      echo "FAIL $label: both the annotation and the example give a launch; keep one"; fail=1; continue
    fi
    {
      toml_table launch "$launch"
      sed -n 's|^[[:space:]]*// @scratch[[:space:]]||p' "$file" | while IFS= read -r s; do toml_table scratch "$s"; done
      sed -n 's|^[[:space:]]*// @tensormap[[:space:]]||p' "$file" | while IFS= read -r s; do toml_table tensor_map "$s"; done
    } >"$tmp/launch$i.toml"
    opts=(--launch "$tmp/launch$i.toml")
  fi
  out=$("$ptxforge" run --device gpu --no-time "${opts[@]}" "$root/$task" "$file" 2>&1 </dev/null); rc=$?
  if ((rc == 0)); then
    echo "ok   $label ($task): $(grep '^verdict' <<<"$out")"
  elif ((rc == 2)) && grep -q "NOT verified on a GPU" <<<"$out"; then
    echo "skip $label ($task): check and assemble passed, NOT verified on a GPU"; skipped=$((skipped + 1))
  else
    echo "FAIL $label ($task, exit $rc):"; echo "$out"; fail=1
  fi
done
if ((fail)); then exit 1; fi
if ((skipped)); then echo "no GPU: $skipped of ${#labels[@]} examples not run"; exit 77; fi
exit 0
