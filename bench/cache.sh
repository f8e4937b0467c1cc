#!/bin/sh
# cache.sh - tacho cache beside its peers, in one run (docs/performance/cache.md):
#   1. the default run's wall time (the issue asks for at most 5 s), RUNS runs;
#   2. latency of each level against a pointer chase built as lmbench's lat_mem_rd
#      builds its chain, and bandwidth against likwid-bench (load_avx, store_avx,
#      copy_avx), on the same CPU and working sets (bench/cache-bench.c).
#
#   bench/cache.sh [BUILD]       (BUILD: the build folder, default build)
# Needs likwid-bench (Debian likwid) and GNU time (/usr/bin/time): `scripts/deps.sh bench`
# installs likwid. RUNS
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

echo "1. the default run ($runs runs; tacho cache -C 0 > /dev/null): wall time, and CPU time (user + sys)"
echo "   (the wall time of a run that shares the CPUs is the CPU time plus other tasks' slices)"
i=0
: > /tmp/cache-bench.$$
while [ $i -lt "$runs" ]; do
	/usr/bin/time -f "%e %U %S" -a -o /tmp/cache-bench.$$ "$tacho" cache -C 0 > /dev/null
	i=$((i + 1))
done
awk '{ print $1, $2 + $3 }' /tmp/cache-bench.$$ | sort -n | awk '{ w[NR] = $1; c[NR] = $2 }
	END { printf "   wall: min %.2f s, median %.2f s, max %.2f s\n", w[1], w[int((NR + 1) / 2)], w[NR] }'
awk '{ print $2 + $3 }' /tmp/cache-bench.$$ | sort -n | awk '{ c[NR] = $1 }
	END { printf "   CPU:  min %.2f s, median %.2f s, max %.2f s\n", c[1], c[int((NR + 1) / 2)], c[NR] }'
rm -f /tmp/cache-bench.$$
echo

echo "2. against lmbench's method and likwid-bench"
"$cb" 0
