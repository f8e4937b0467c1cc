#!/bin/sh
# report-line.sh - tacho report --sort line against perf report --sort srcline, in
# interleaved pairs (bench-pairs: median of the per-round ratios with min and max, wall
# and CPU), on recordings of the same python3 workload made by each tool (cpu-clock at
# 2.5 kHz, about 4k samples with LOOP's default; python3's library needs line tables for
# the lines to be read: pyenv's build has them, Debian's needs libpython3-dbg):
#   1. warm: the line caches of the build-id cache there (every report after the first);
#   2. cold: the line caches removed before each report (each builds them again: the
#      first report of a binary; the removal, an rm run by sh, is in tacho's time);
#   3. without: a cache folder that cannot be made (libdw's line tables every time).
# usage: sh bench/report-line.sh [BUILD] (default build); ROUNDS (default 3: perf takes
# seconds) sets the pairs, LOOP (default 6000000) the workload's iterations.
# Results: docs/performance.md, "Issue 32: by-line reports". Medians on this machine only.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$(pwd)/$b/tacho
pairs=$b/bench/bench-pairs
rounds=${ROUNDS:-3}
loop=${LOOP:-6000000}
for f in "$tacho" "$pairs"; do
	[ -x "$f" ] || { echo "report-line.sh: $f is missing (make BUILD=$b all benches)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "report-line.sh: perf is missing (scripts/deps.sh bench)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "report-line.sh: python3 is missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
work="s=0
for i in range($loop): s+=len(str(i))"

show() {
	awk -F '\t' '{ printf "%-34s %9.2f ms vs %9.2f ms  wall %.2fx (%.2f-%.2f)   CPU %6.2f vs %6.2f ms  %.3fx (%.3f-%.3f)\n      vs %s\n", $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $2 }'
}

warm=$tmp/warm
mkdir -p "$warm"
XDG_CACHE_HOME=$warm "$tacho" record -q -e cpu-clock -F 2500 -o "$tmp/t.rec" -- python3 -c "$work"
perf record -q -e cpu-clock -F 2500 -o "$tmp/p.data" -- python3 -c "$work" 2>/dev/null
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $rounds pairs each"
echo "recordings: tacho $(XDG_CACHE_HOME=$warm "$tacho" report -i "$tmp/t.rec" | head -1)"
echo "            perf $(perf report -i "$tmp/p.data" --stdio --sort sym 2>/dev/null | grep '^# Samples' | head -1)"
XDG_CACHE_HOME=$warm "$tacho" report -i "$tmp/t.rec" --sort line >/dev/null   # builds the caches
echo "line caches: $(find "$warm" -name lines | wc -l), $(du -ck $(find "$warm" -name lines) | tail -1 | cut -f1) KiB"
echo "1. by line, warm line cache"
XDG_CACHE_HOME=$warm "$pairs" "$rounds" "$tacho" report -i "$tmp/t.rec" --sort line ";" \
	perf report -i "$tmp/p.data" --stdio --sort srcline | show
echo "2. by line, cold (line caches removed before each report)"
XDG_CACHE_HOME=$warm "$pairs" "$rounds" sh -c "find '$warm' -name lines -delete; exec '$tacho' report -i '$tmp/t.rec' --sort line" ";" \
	perf report -i "$tmp/p.data" --stdio --sort srcline | show
echo "3. by line, no cache folder (libdw every time)"
XDG_CACHE_HOME=/proc/no-such-folder "$pairs" "$rounds" "$tacho" report -i "$tmp/t.rec" --sort line ";" \
	perf report -i "$tmp/p.data" --stdio --sort srcline | show
