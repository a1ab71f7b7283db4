#!/usr/bin/env bash
# The bench's HTML report in headless Chromium: the DOM it builds holds every chart with a
# mark per arm, and the screenshot shows the arms' colours (the charts really drew). Takes the
# report the e2e test left. Exit 77 without Chromium.
set -u
html=$1; here=$(cd "$(dirname "$0")" && pwd)
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then echo "no chromium: skipping"; exit 77; fi
if [[ ! -s $html ]]; then echo "FAIL no report at $html (the bench.e2e test writes it)"; exit 1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" --window-size=1280,2600)
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$html" >"$tmp/dom.html" 2>"$tmp/dom.err"
timeout 120 "$chromium" "${flags[@]}" --screenshot="$tmp/shot.png" "file://$html" >/dev/null 2>"$tmp/shot.err"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
check "Chromium rendered the page" "grep -q '<h1>ptxforge bench: e2e</h1>' '$tmp/dom.html'"
for chart in chart-speedup chart-fastp-nvcc chart-fastp-library chart-rounds chart-failures; do
  check "the DOM has <svg id=$chart>" "grep -q '<svg id=\"$chart\"' '$tmp/dom.html'"
done
python3 - "$tmp/dom.html" <<'PY' || fail=1
import re, sys
dom = open(sys.argv[1]).read()
def section(id):
    m = re.search(r'<svg id="%s".*?</svg>' % id, dom, re.S)
    return m.group(0) if m else ""
ok = True
def expect(what, cond):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok = ok and cond
rounds = section("chart-rounds")
for arm in ("learner", "replayed"):
    bars = re.findall(r'<rect class="bar" data-arm="%s" data-bucket="([^"]+)" data-value="([^"]+)"' % arm, rounds)
    # Without a GPU nothing verifies: every trajectory of the arm is in "never", 8 of them.
    expect("rounds chart: %s has 8 trajectories in 'never' (got %s)" % (arm, bars), bars == [("never", "8")])
failures = section("chart-failures")
expect("failure chart: a bar for each arm", all('data-arm="%s"' % a in failures for a in ("learner", "replayed")))
expect("arms table lists both arms", 'data-arm="learner"' in dom and 'data-arm="replayed"' in dom)
expect("the speedup chart says why it is empty", "nothing is timed" in dom)
sys.exit(0 if ok else 1)
PY
check "the screenshot was written" "[[ -s '$tmp/shot.png' ]]"
python3 "$here/png_colours.py" "$tmp/shot.png" 4e79a7 f28e2b || fail=1
exit $fail
