#!/bin/sh
# cache.sh - tacho cache beside its peers, in one run (docs/performance/cache.md):
#   1. the default run's wall time (the issue asks for at most 5 s), RUNS runs;
#   2. latency of each level against a pointer chase built as lmbench's lat_mem_rd
#      builds its chain, and bandwidth against likwid-bench (load_avx, store_avx,
#      copy_avx), on the same CPU and working sets (bench/cache-bench.c).
#
#   bench/cache.sh [BUILD]       (BUILD: the build folder, default build)
# Needs likwid-bench (Debian likwid): `scripts/deps.sh bench` installs it. RUNS
# (default 5) sets the effort of part 1.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
cb=$b/bench/cache-bench
runs=${RUNS:-5}
for f in "$tacho" "$cb"; do
	[ -x "$f" ] || { echo "cache.sh: $f is missing (make BUILD=$b all benches)" >&2; exit 1; }
done
command -v likwid-bench >/dev/null || { echo "cache.sh: likwid-bench is missing (scripts/deps.sh bench)" >&2; exit 1; }

echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tacho: $("$tacho" --version); $(likwid-bench -h 2>&1 | grep -i -m1 version || echo likwid-bench)"
echo

echo "1. the default run, wall time ($runs runs; tacho cache -C 0 > /dev/null)"
i=0
: > /tmp/cache-bench.$$
while [ $i -lt "$runs" ]; do
	t0=$(date +%s.%N)
	"$tacho" cache -C 0 > /dev/null
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.2f\n", $2 - $1 }' >> /tmp/cache-bench.$$
	i=$((i + 1))
done
sort -n /tmp/cache-bench.$$ | awk '{ v[NR] = $1 } END { printf "   min %.2f s, median %.2f s, max %.2f s\n", v[1], v[int((NR + 1) / 2)], v[NR] }'
rm -f /tmp/cache-bench.$$
echo

echo "2. against lmbench's method and likwid-bench"
"$cb" 0
