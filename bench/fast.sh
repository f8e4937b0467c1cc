#!/bin/sh
# fast.sh - the start-up and streaming figures of issue 13 against their peers, each in
# interleaved pairs (bench-pairs: A and B once per round, in alternating order; the
# median of the per-round ratios A/B with min and max, wall and CPU):
#   1. tacho cpu vs cpuid and vs lscpu;
#   2. tacho list vs perf list;
#   3. tacho stat -- true and stat -r 10 -- true vs perf stat;
#   4. stat -I 10 --json to a file (its stderr) vs perf stat -I 10 -j, and the write(2)
#      calls per line of each (strace);
#   5. the first tacho_region_begin (ms), time-only pairs over 1 to 10,000 names cycled
#      (ns, beside one name) and the regions JSON report at 10k-80k names;
#   6. the record file's CRC-32 vs zlib (bench/crc.sh).
# usage: sh bench/fast.sh [BUILD] (default build); ROUNDS (default 30) sets the pairs.
# Results: docs/performance.md, "Issue 13". Timings are medians on this machine only.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
pairs=$b/bench/bench-pairs
rounds=${ROUNDS:-30}
for f in "$tacho" "$pairs" "$b/bench/bench-region" "$b/bench/bench-crc"; do
	[ -x "$f" ] || { echo "fast.sh: $f is missing (make BUILD=$b all benches)" >&2; exit 1; }
done
for t in perf cpuid lscpu; do
	command -v $t >/dev/null || { echo "fast.sh: $t is missing (scripts/deps.sh bench)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

show() {
	awk -F '\t' '{ printf "%-34s %9.2f ms vs %9.2f ms  wall %.2fx (%.2f-%.2f)   CPU %6.2f vs %6.2f ms  %.2fx (%.2f-%.2f)\n      vs %s\n", $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $2 }'
}

echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $rounds pairs each"
echo "1. tacho cpu"
"$pairs" "$rounds" "$tacho" cpu ";" cpuid | show
"$pairs" "$rounds" "$tacho" cpu ";" lscpu | show
echo "2. tacho list"
"$pairs" "$rounds" "$tacho" list ";" perf list | show
echo "3. stat start-up"
"$pairs" "$rounds" "$tacho" stat -- true ";" perf stat -- true | show
"$pairs" "$rounds" "$tacho" stat -r 10 -- true ";" perf stat -r 10 -- true | show
echo "4. stat -I 10 --json, stderr to a file (1 s of sleep)"
"$pairs" -e "$tmp/err" "$rounds" "$tacho" stat -I 10 --json -e task-clock -- sleep 1 ";" \
	perf stat -I 10 -j -e task-clock -- sleep 1 | show
if command -v strace >/dev/null; then
	for who in tacho perf; do
		if [ $who = tacho ]; then
			set -- "$tacho" stat -I 10 --json -e task-clock -- sleep 0.3
		else
			set -- perf stat -I 10 -j -e task-clock -- sleep 0.3
		fi
		strace -f -qq -e trace=write -e signal=none -o "$tmp/strace" "$@" 2>"$tmp/err" >/dev/null
		w=$(grep -c 'write(2, ' "$tmp/strace" || true)
		l=$(wc -l < "$tmp/err")
		echo "   $who: $w write(2) calls to stderr for $l lines"
	done
fi
echo "5. regions"
for i in 1 2 3 4 5; do "$b/bench/bench-region" first; done | sort -t "$(printf '\t')" -k2 -n |
	awk -F '\t' '{ v[NR] = $2 } END { printf "   first tacho_region_begin: median %.3f ms (min %.3f, max %.3f, 5 runs)\n", v[3], v[1], v[5] }'
"$b/bench/bench-region" names | awk -F '\t' '{ printf "   %-36s %8.1f ns\n", $1, $2 }'
"$b/bench/bench-region" report | awk -F '\t' '{ printf "   %-36s %8.1f\n", $1, $2 }'
echo "6. CRC-32"
sh bench/crc.sh "$b"
