#!/usr/bin/env bash
# `ptxforge serve` as an operator runs it: on a free loopback port with one CPU engine worker
# and a fresh database, vector_add's solution POSTed with ?wait passes on the CPU engine;
# /healthz and /metrics answer; SIGTERM ends the server with exit 0; a second server over the
# same database answers GET for the run the first one stored.
# Usage: serve_cli_test.sh PTXFORGE REPO_ROOT. Exit 77 without ptxas or curl.
set -u
ptxforge=$1; root=$2
if [[ ! -x /usr/local/cuda/bin/ptxas ]] && ! command -v ptxas >/dev/null; then echo "no ptxas: skipping"; exit 77; fi
command -v curl >/dev/null || { echo "no curl: skipping"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# start NAME [OPTIONS...]: starts the server (its stderr in $tmp/NAME.err); sets pid and port once
# it prints its "listening on" line (at most 60 s).
start() {
  "$ptxforge" serve --listen 127.0.0.1:0 --cpu-workers 1 --gpus none --db "$tmp/serve.db" "${@:2}" 2>"$tmp/$1.err" &
  pid=$!
  port=
  for _ in $(seq 600); do
    port=$(sed -n 's|^ptxforge serve: listening on http://127\.0\.0\.1:\([0-9]*\) .*|\1|p' "$tmp/$1.err")
    [[ -n $port ]] && return 0
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start:"; cat "$tmp/$1.err"; exit 1
}
# Sends SIGTERM and waits for the exit; sets rc.
stop() {
  kill -TERM $pid
  wait $pid
  rc=$?
  pid=
}

start first
check "the line names the workers and the database" \
  "grep -q '(0 GPU workers, 1 CPU engine workers, db $tmp/serve.db)' '$tmp/first.err'"
python3 -c "import json,sys; print(json.dumps({'task': 'vector_add', 'candidate': open(sys.argv[1]).read(), 'seeds': 2}))" \
  "$root/tasks/level1/vector_add/solution.ptx" >"$tmp/body.json"
code=$(curl -s -o "$tmp/run.json" -D "$tmp/run.headers" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary @"$tmp/body.json" "http://127.0.0.1:$port/v1/runs?wait=120")
check "POST ?wait answers 200 (got $code)" "[[ $code == 200 ]]"
check "with a Location header" "grep -qi '^Location: /v1/runs/r_' '$tmp/run.headers'"
py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$1" 2>/dev/null; }
check "the run passed on the CPU engine" \
  "py '$tmp/run.json' 'd[\"state\"] == \"done\" and d[\"record\"][\"passed\"] is True and d[\"record\"][\"verified_by\"] == \"cpu_engine\"'"
id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$tmp/run.json" 2>/dev/null)
curl -s "http://127.0.0.1:$port/healthz" >"$tmp/health.json"
check "/healthz: ok, one CPU worker" "py '$tmp/health.json' 'd[\"status\"] == \"ok\" and d[\"workers\"] == {\"gpu\": 0, \"cpu\": 1}'"
curl -s "http://127.0.0.1:$port/metrics" >"$tmp/metrics.txt"
check "/metrics counts the passed run" "grep -q '^ptxforge_runs_total{.*verdict=\"passed\".*} 1' '$tmp/metrics.txt'"
check "/metrics counts HTTP answers" "grep -q '^ptxforge_http_requests_total{code=\"200\"}' '$tmp/metrics.txt'"
code=$(curl -s -o "$tmp/err.json" -w '%{http_code}' -H 'Content-Type: application/json' --data '{"task": "vector_add"}' \
  "http://127.0.0.1:$port/v1/runs")
check "a bad request is a 400 naming the field" "[[ $code == 400 ]] && py '$tmp/err.json' 'd[\"error\"][\"field\"] == \"candidate\"'"
stop
check "SIGTERM: exit 0 (got $rc)" "((rc == 0))"

start second
code=$(curl -s -o "$tmp/again.json" -w '%{http_code}' "http://127.0.0.1:$port/v1/runs/$id")
check "after a restart, GET answers the stored run (got $code)" \
  "[[ $code == 200 ]] && py '$tmp/again.json' 'd[\"id\"] == \"$id\" and d[\"state\"] == \"done\" and d[\"record\"][\"passed\"] is True'"
stop
check "the second server exits 0 too (got $rc)" "((rc == 0))"

# SIGTERM with a run still going: after --grace the server exits 0 at once (not when the run's
# own limit ends), and the run, still "running" in the database, runs again after a restart.
start third --grace 1
sed 's/^\(\s*\)ret;/\1SPIN: bra.uni SPIN;\n\1ret;/' "$root/tasks/level1/vector_add/solution.ptx" >"$tmp/spin.ptx"
python3 -c "import json,sys; print(json.dumps({'task': 'vector_add', 'candidate': open(sys.argv[1]).read(), 'timeout_s': 60}))" \
  "$tmp/spin.ptx" >"$tmp/spin.json"
curl -s -o "$tmp/spin-run.json" -H 'Content-Type: application/json' --data-binary @"$tmp/spin.json" "http://127.0.0.1:$port/v1/runs"
spin_id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$tmp/spin-run.json" 2>/dev/null)
for _ in $(seq 100); do  # until a worker has taken it
  curl -s "http://127.0.0.1:$port/v1/runs/$spin_id" | grep -q '"state":"running"' && break
  sleep 0.1
done
t0=$SECONDS
stop
check "SIGTERM with a run going: exit 0 (got $rc) within the grace, not the run's 240 s ($((SECONDS - t0)) s)" \
  "((rc == 0 && SECONDS - t0 < 60))"
check "it says the run will run again" "grep -q 'will run again after the next start' '$tmp/third.err'"
start fourth --grace 1
curl -s "http://127.0.0.1:$port/v1/runs/$spin_id" >"$tmp/spin-again.json"
check "after the restart the run is queued or running again" \
  "py '$tmp/spin-again.json' 'd[\"state\"] in (\"queued\", \"running\")'"
stop
check "and that server exits 0 as well (got $rc)" "((rc == 0))"

# An open address without tokens is refused before anything starts.
"$ptxforge" serve --listen 0.0.0.0:0 --cpu-workers 1 --db "$tmp/other.db" 2>"$tmp/open.err"
rc=$?
check "0.0.0.0 without --token-file: exit 2 (got $rc)" "((rc == 2)) && grep -q 'token-file' '$tmp/open.err'"
check "and no database was created" "[[ ! -e '$tmp/other.db' ]]"
exit $fail
