#!/usr/bin/env bash
# GPU test: every complete example in the knowledge (a ```ptx block whose code holds
# `.version`, the rule src/agent/knowledge_test.cpp applies on the CPU) runs and verifies
# against the task its annotation names. The annotation is the line right before the fence:
#   <!-- run: tests/tasks/NAME -->                                   the example has `// @launch` lines
#   <!-- run: tests/tasks/NAME launch="grid=(...) block=(...)" -->   it has none: this is its launch
# The task's path is relative to ROOT. A launch in the annotation goes to `ptxforge run --launch`
# as a TOML file, with the example's `// @scratch` and `// @tensormap` lines beside it.
# An example whose task's min_target the GPU's target does not satisfy (a tcgen05 example on a
# Hopper GPU) is checked and assembled for that min_target and skipped with the reason; with no
# GPU at all, `run` assembles each example for its own `.target` and says it was NOT verified.
# One line per example: ok, FAIL, or skip (with why: no GPU, or a target the GPU lacks).
# Exit 1 if an example failed, has no annotation or names a missing task; else 77 (skip) if
# some example could not run for want of a GPU; else 0 (examples skipped for a target the GPU
# lacks do not make the run a skip: everything this GPU can run, ran).
# The GPU's target is sm_XY from nvidia-smi's compute capability X.Y, with the `a` suffix from
# compute capability 9.0 on, as ptxforge assembles for it; PTXFORGE_GPU_TARGET overrides it
# ("none": no GPU).
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

# Does a module for target $1 get what target $2 requires? The rule of src/ptx/target.h: a
# plain sm_XY needs sm >= XY; sm_XYa needs exactly sm_XYa; sm_XYf needs an `a` or `f` target
# of the same family (XY / 10) at or above XY.
satisfies() {
  local have=$1 need=$2 hs hx ns nx
  [[ $have =~ ^sm_([0-9]+)([af]?)$ ]] || return 1
  hs=${BASH_REMATCH[1]}; hx=${BASH_REMATCH[2]}
  [[ $need =~ ^sm_([0-9]+)([af]?)$ ]] || return 1
  ns=${BASH_REMATCH[1]}; nx=${BASH_REMATCH[2]}
  case $nx in
    a) [[ $hs == "$ns" && $hx == a ]] ;;
    f) [[ ($hx == a || $hx == f) && $((hs / 10)) == $((ns / 10)) ]] && ((hs >= ns)) ;;
    *) ((hs >= ns)) ;;
  esac
}

gpu_target() {
  if [[ -n ${PTXFORGE_GPU_TARGET:-} ]]; then
    [[ $PTXFORGE_GPU_TARGET == none ]] || echo "$PTXFORGE_GPU_TARGET"
    return
  fi
  local cc
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -1) || return
  [[ $cc =~ ^([0-9]+)\.([0-9]+)$ ]] || return
  local sm=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
  if ((BASH_REMATCH[1] >= 9)); then echo "sm_${sm}a"; else echo "sm_$sm"; fi
}
gpu=$(gpu_target)

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
fail=0; skipped=0; target_skipped=0
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
  need=$(sed -n 's/^min_target[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$task/task.toml" | head -1)
  need=${need:-sm_80}
  if [[ -n $gpu ]] && ! satisfies "$gpu" "$need"; then
    # This GPU cannot run it: the front end and ptxas judge it for the target it needs.
    if out=$("$ptxforge" check --ptxas --arch "$need" "$file" 2>&1 </dev/null); then
      echo "skip $label ($task) (needs $need, GPU is $gpu): checked and assembled for $need"; target_skipped=$((target_skipped + 1))
    else
      echo "FAIL $label ($task): check or ptxas for $need rejects it:"; echo "$out"; fail=1
    fi
    continue
  fi
  if [[ -z $gpu ]]; then
    # No GPU: assemble for the module's own target, which is what it was written for.
    own=$(sed -n 's/^[[:space:]]*\.target[[:space:]]\{1,\}\([a-z0-9_]*\).*/\1/p' "$file" | head -1)
    [[ -n $own ]] && opts+=(--arch "$own")
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
if ((target_skipped)); then echo "$target_skipped of ${#labels[@]} examples need a target the GPU ($gpu) lacks: checked and assembled only"; fi
if ((fail)); then exit 1; fi
if ((skipped)); then echo "no GPU: $skipped of ${#labels[@]} examples not run"; exit 77; fi
exit 0
