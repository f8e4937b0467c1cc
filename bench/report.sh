#!/bin/sh
# report.sh - tacho report by symbol against perf report, in interleaved pairs
# (bench-pairs: the median of the per-round ratios with min and max, wall and CPU), on
# recordings of the same workload made by each tool: a shell loop sampled on cpu-clock
# at 20 kHz, user and kernel (about 40k samples, some in the kernel).
#   1. tacho report (the kernel's symbols from the user's cache folder, as every report
#      after the first of a boot) vs perf report --stdio --sort sym;
#   2. the same with the copy refused (a cache folder others may write: /proc/kallsyms
#      is read every time, as the first report of a boot does);
#   3. tacho reading perf's own file vs perf report;
#   4. the same with call chains in both recordings (-g);
#   5. the folded and perf-script exports of those vs perf script;
#   6. by source line vs perf report --sort srcline (SRCLINE_ROUNDS pairs, default 3);
#   7. peak RSS of each (GNU time), median of 5;
#   8. bytes per sample of each file (its size over its samples), without and with -g.
# usage: sh bench/report.sh [BUILD] (default build); ROUNDS (default 20) sets the pairs,
# LOOP (default 1500000) the loop's iterations.
# Results: docs/performance.md, "Issue 13". Timings are medians on this machine only.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$(pwd)/$b/tacho
pairs=$b/bench/bench-pairs
rounds=${ROUNDS:-20}
loop=${LOOP:-1500000}
for f in "$tacho" "$pairs"; do
	[ -x "$f" ] || { echo "report.sh: $f is missing (make BUILD=$b all benches)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "report.sh: perf is missing (scripts/deps.sh bench)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "report.sh: GNU time is missing (scripts/deps.sh bench)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
work="i=0; while [ \$i -lt $loop ]; do i=\$((i+1)); done"

show() {
	awk -F '\t' '{ printf "%-34s %9.2f ms vs %9.2f ms  wall %.2fx (%.2f-%.2f)   CPU %6.2f vs %6.2f ms  %.2fx (%.2f-%.2f)\n      vs %s\n", $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $2 }'
}

"$tacho" record -q -e cpu-clock -F 20000 -o "$tmp/t.rec" -- sh -c "$work"
perf record -q -e cpu-clock -F 20000 -o "$tmp/p.data" -- sh -c "$work" 2>/dev/null
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $rounds pairs each"
"$tacho" record -q -g -e cpu-clock -F 20000 -o "$tmp/tg.rec" -- sh -c "$work"
perf record -q -g -e cpu-clock -F 20000 -o "$tmp/pg.data" -- sh -c "$work" 2>/dev/null
echo "recordings: tacho $("$tacho" report -i "$tmp/t.rec" | head -1)"
echo "            perf $(perf report -i "$tmp/p.data" --stdio --sort sym 2>/dev/null | grep '^# Samples' | head -1)"
warm=$tmp/warm
cold=$tmp/cold
mkdir -p "$warm" "$cold/tacho"
chmod 777 "$cold/tacho"
XDG_CACHE_HOME=$warm "$tacho" report -i "$tmp/t.rec" >/dev/null   # makes the copy
echo "1. by symbol, kernel symbols from the copy"
XDG_CACHE_HOME=$warm "$pairs" "$rounds" "$tacho" report -i "$tmp/t.rec" ";" \
	perf report -i "$tmp/p.data" --stdio --sort sym | show
echo "2. by symbol, /proc/kallsyms read (the copy refused)"
XDG_CACHE_HOME=$cold "$pairs" "$rounds" "$tacho" report -i "$tmp/t.rec" ";" \
	perf report -i "$tmp/p.data" --stdio --sort sym | show
echo "3. tacho reading perf.data"
XDG_CACHE_HOME=$warm "$pairs" "$rounds" "$tacho" report -i "$tmp/p.data" ";" \
	perf report -i "$tmp/p.data" --stdio --sort sym | show
echo "4. by symbol, recordings with call chains (-g; perf without its call graph: -g none)"
XDG_CACHE_HOME=$warm "$pairs" "$rounds" "$tacho" report -i "$tmp/tg.rec" ";" \
	perf report -i "$tmp/pg.data" --stdio --sort sym --no-children -g none | show
echo "5. exports of the -g recordings: folded stacks and perf-script text vs perf script"
XDG_CACHE_HOME=$warm "$pairs" "$rounds" "$tacho" report -i "$tmp/tg.rec" --format folded ";" \
	perf script -i "$tmp/pg.data" | show
XDG_CACHE_HOME=$warm "$pairs" "$rounds" "$tacho" report -i "$tmp/tg.rec" --format perf-script ";" \
	perf script -i "$tmp/pg.data" | show
echo "6. by source line vs perf report --sort srcline (${SRCLINE_ROUNDS:-3} pairs: perf takes seconds)"
XDG_CACHE_HOME=$warm "$pairs" "${SRCLINE_ROUNDS:-3}" "$tacho" report -i "$tmp/tg.rec" --sort line ";" \
	perf report -i "$tmp/pg.data" --stdio --no-children -g none --sort srcline | show
echo "7. peak RSS (KiB, median of 5)"
for who in tacho perf; do
	for i in 1 2 3 4 5; do
		if [ $who = tacho ]; then
			XDG_CACHE_HOME=$warm /usr/bin/time -f %M "$tacho" report -i "$tmp/t.rec" 2>&1 >/dev/null | tail -1
		else
			/usr/bin/time -f %M perf report -i "$tmp/p.data" --stdio --sort sym 2>&1 >/dev/null | tail -1
		fi
	done | sort -n | sed -n 3p | awk -v w=$who '{ printf "   %s: %d KiB\n", w, $1 }'
done
echo "8. bytes per sample in the file (the whole file over its samples)"
per_sample() {   # NAME FILE SAMPLES
	awk -v n="$1" -v s="$(stat -c %s "$2")" -v k="$3" \
		'BEGIN { printf "   %-14s %9d bytes / %6d samples = %6.1f\n", n, s, k, s / k }'
}
tacho_n() { "$tacho" report -i "$1" | head -1 | sed 's/^# \([0-9,]*\) samples.*/\1/' | tr -d ,; }
perf_n() { perf report -D -i "$1" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE'; }
per_sample "tacho" "$tmp/t.rec" "$(tacho_n "$tmp/t.rec")"
per_sample "perf" "$tmp/p.data" "$(perf_n "$tmp/p.data")"
per_sample "tacho -g" "$tmp/tg.rec" "$(tacho_n "$tmp/tg.rec")"
per_sample "perf -g" "$tmp/pg.data" "$(perf_n "$tmp/pg.data")"
