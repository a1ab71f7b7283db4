#!/usr/bin/env bash
# The Python client's pytest suite (python/tests): the client against a stand-in server for
# retries and failover, reward() on hand-made records, and the client against a real
# `ptxforge serve` on loopback verifying on the CPU engine.
# Usage: python_client_test.sh PTXFORGE REPO_ROOT. Exit 77 (skipped) without Debian's pytest-3.
set -u
ptxforge=$1; root=$2
if ! command -v pytest-3 >/dev/null; then echo "no pytest-3 (python3-pytest): skipping"; exit 77; fi
cd "$root" || exit 1
export PYTHONDONTWRITEBYTECODE=1 PTXFORGE_BIN=$ptxforge PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
# No cache folder in the source tree; -rs lists why a test skipped (a binary without `serve`).
exec pytest-3 -q -rs -p no:cacheprovider python/tests
