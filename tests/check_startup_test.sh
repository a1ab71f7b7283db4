#!/usr/bin/env bash
# What every `ptxforge` process maps at its start: `check` runs once per candidate, and a start
# that maps libcurl's TLS/Kerberos/LDAP chain or cpp-httplib's OpenSSL cost more than checking a
# module. libcurl is loaded at the first LLM request (src/llm/curl_library.cpp) and the HTTP
# server lives in ptxforge-serve; this keeps them out of the program's own dependencies, and
# checks that `serve` still reaches the server.
# Usage: check_startup_test.sh PTXFORGE. Exit 77 without ldd.
set -u
ptxforge=$1
command -v ldd >/dev/null || { echo "no ldd: skipping"; exit 77; }
fail=0
libs=$(ldd "$ptxforge") || { echo "FAIL ldd $ptxforge"; exit 1; }
for lib in libcurl libssl libcrypto libcpp-httplib libgnutls libkrb5 libldap libssh; do
  if grep -q "$lib" <<<"$libs"; then echo "FAIL ptxforge maps $lib at every start"; fail=1; else echo "ok   no $lib"; fi
done
# The library count stays small (libstdc++, libc, fmt, toml++, sqlite3 and the loader's own).
n=$(grep -c '=>\|ld-linux' <<<"$libs")
if ((n <= 12)); then echo "ok   $n libraries"; else echo "FAIL $n libraries at start:"; echo "$libs"; fail=1; fi
# `serve` runs ptxforge-serve where the build has the HTTP server, else says it has none: either
# way its help comes back, not a missing-program error.
out=$("$ptxforge" serve --help 2>&1); rc=$?
if ((rc == 0)) && grep -q -- "--listen" <<<"$out"; then echo "ok   serve --help"
elif grep -q "no HTTP server" <<<"$out"; then echo "ok   serve: this build has no HTTP server"
else echo "FAIL serve --help (exit $rc): $out"; fail=1; fi
exit $fail
