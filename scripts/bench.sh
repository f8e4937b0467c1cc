#!/bin/sh
# bench.sh - run every benchmark script in bench/ (each compares tacho with its peer
# tool, perf or PAPI, in the same run) and print their results. Not part of `make test`:
# timings on shared machines are noisy and belong in docs/performance.md, not in tests.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
status=0
for s in bench/*.sh; do
	[ -f "$s" ] || continue
	echo "=== $s"
	sh "$s" "$b" || { echo "bench.sh: $s failed" >&2; status=1; }
done
exit $status
