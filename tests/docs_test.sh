#!/usr/bin/env bash
# README.md is a map: the detail lives in pages it links to. This keeps the map true and
# complete: every relative link resolves; every subcommand `ptxforge --help` lists is in
# README's table; every long option `ptxforge help <command>` prints, and every environment
# variable the code and scripts read, is named in README or in a page reachable from it.
# With --against FILE, every command, option and variable FILE names (an older README, say)
# must still be named somewhere reachable, so that moving text between pages loses nothing.
#   tests/docs_test.sh [--against FILE] [PTXFORGE]
# Without PTXFORGE the checks that need the binary are skipped (and say so).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
against=""
if [[ ${1:-} == --against ]]; then against=$2; shift 2; fi
ptxforge=${1:-}
cd "$root"
fail=0
bad() { echo "docs_test: $*"; fail=1; }

# The pages reachable from README.md through relative Markdown links (one page per line).
reachable=$(python3 - <<'EOF'
import os, re
seen, todo = set(), ["README.md"]
while todo:
    page = todo.pop()
    if page in seen or not os.path.isfile(page):
        continue
    seen.add(page)
    text = open(page, encoding="utf-8").read()
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        if "://" in target:
            continue
        path = os.path.normpath(os.path.join(os.path.dirname(page), target))
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, "README.md")):
            path = os.path.join(path, "README.md")
        if path.endswith(".md"):
            todo.append(path)
print("\n".join(sorted(seen)))
EOF
)
mapfile -t pages <<<"$reachable"
corpus=$(cat "${pages[@]}")
named() { grep -qF -- "$1" <<<"$corpus"; }

# Every relative link in a reachable page resolves to a file or folder.
while IFS=$'\t' read -r page target; do
  [[ -e $(dirname "$page")/$target ]] || bad "$page links to '$target', which does not exist"
done < <(python3 - "${pages[@]}" <<'EOF'
import re, sys
for page in sys.argv[1:]:
    for target in re.findall(r"\]\(([^)#\s]+)", open(page, encoding="utf-8").read()):
        if "://" not in target:
            print(f"{page}\t{target}")
EOF
)

# README must stay a map.
lines=$(wc -l <README.md)
((lines <= 220)) || bad "README.md has $lines lines; keep it a map of about 200 and move detail to docs/"

# Variables: what src/ and tools/ read with getenv, and what scripts/ read as ${VAR:-...}.
vars=$( (grep -rhoE 'getenv\("[A-Z][A-Z0-9_]+"\)' src tools --include='*.cpp' --include='*.h' --exclude='*_test.cpp' |
           sed -E 's/getenv\("([A-Z0-9_]+)"\)/\1/'
         grep -hoE '\$\{[A-Z][A-Z0-9_]+:-' scripts/* | sed -E 's/\$\{([A-Z0-9_]+):-/\1/'
         grep -hoE 'env\("[A-Z][A-Z0-9_]+"\)' src/util/paths.cpp src/llm/provider.cpp | sed -E 's/env\("([A-Z0-9_]+)"\)/\1/') |
        sort -u)
for v in $vars; do
  # The user's own: HOME and PWD are documented through what they default, COLUMNS is the
  # terminal's width.
  [[ $v == HOME || $v == PWD || $v == COLUMNS ]] && continue
  named "\`$v\`" || named "$v" || bad "environment variable $v is read by the code but documented nowhere reachable from README.md"
done

if [[ -n $ptxforge ]]; then
  # Commands: the indented names under "commands:" in --help (`help` itself aside).
  top=$("$ptxforge" --help)
  subs=$(awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' <<<"$top" | grep -vx help)
  [[ -n $subs ]] || bad "could not read the subcommands from '$ptxforge --help'"
  for s in $subs; do
    grep -qE "^\| \`$s[ \`]" README.md || bad "subcommand '$s' is not in README.md's table of commands"
    # Long options of the command and of its own subcommands: those CLI11 lists under
    # "Subcommands:", and those the top-level help names in parentheses, "(report, export)".
    helps=$("$ptxforge" help "$s" 2>&1 || true)
    inner=$( (awk '/^[A-Za-z]*[Ss]ubcommands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' <<<"$helps"
              grep -E "^  $s " <<<"$top" | grep -oE '\([a-z, ]+\)$' | tr -d '(),' | tr ' ' '\n' | grep -vx -e "$s" -e internal || true) | sort -u)
    [[ -n ${DOCS_TEST_VERBOSE:-} ]] && echo "$s: ${inner//$'\n'/ }"
    for i in $inner; do helps+=$'\n'$("$ptxforge" help "$s" "$i" 2>&1 || true); done
    for o in $(grep -oE '(^|[ ,])--[a-zA-Z][a-zA-Z0-9-]+' <<<"$helps" | sed -E 's/^[ ,]//' | sort -u); do
      [[ $o == --help || $o == --help-all ]] && continue
      named "$o" || bad "option $o of '$s' is documented nowhere reachable from README.md"
    done
  done
else
  echo "docs_test: no ptxforge binary given: subcommands and options not checked"
fi

if [[ -n $against ]]; then
  old=$(cat "$against")
  for c in $(grep -oE '`ptxforge [a-z]+( [a-z]+)?' <<<"$old" | sed 's/^`ptxforge //' | awk '{print $1}' | sort -u); do
    named "$c" || bad "command '$c' named in $against is named nowhere reachable"
  done
  for o in $(grep -oE '(^|[^a-zA-Z0-9-])--[a-zA-Z][a-zA-Z0-9-]+' <<<"$old" | sed -E 's/^[^-]//' | sort -u); do
    named "$o" || bad "option $o named in $against is named nowhere reachable"
  done
  for v in $(grep -oE '`[A-Z][A-Z0-9]*_[A-Z0-9_]+`' <<<"$old" | tr -d '`' | sort -u); do
    named "$v" || bad "variable $v named in $against is named nowhere reachable"
  done
fi

((fail == 0)) && echo "docs_test: README.md and the ${#pages[@]} pages it reaches agree with the code"
exit $fail
