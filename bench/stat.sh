#!/bin/sh
# stat.sh - tacho stat side by side with perf stat, in one run (docs/performance/stat.md):
#   1. start-up: `-- true`, interleaved runs, median wall time;
#   2. real programs from Debian (gzip, sqlite3, python3): wall time under each tool;
#   3. the cost of one group read (libtacho against the bare read(2));
#   4. agreement on software events (page-faults, context-switches, task-clock): the
#      medians of N runs under each tool, alternating.
#
#   bench/stat.sh [BUILD]        (BUILD: the build folder, default build)
# Needs perf (linux-perf), gzip and sqlite3: `scripts/deps.sh bench` installs them.
# ROUNDS (default 200) and REPS (default 21) set the effort.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
sb=$b/bench/stat-bench
rounds=${ROUNDS:-200}
reps=${REPS:-21}
for f in "$tacho" "$sb"; do
	[ -x "$f" ] || { echo "stat.sh: $f is missing (make BUILD=$b all benches)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "stat.sh: perf is missing (scripts/deps.sh bench)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seq 1 2000000 > "$tmp/in.txt"     # 14 MB of text for gzip

echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tacho: $("$tacho" --version); perf: $(perf --version)"
echo

echo "1. start-up, '-- true' ($rounds interleaved runs each)"
"$sb" time "$rounds" true ";" perf stat -- true ";" "$tacho" stat -- true \
	";" perf stat -e page-faults -- true ";" "$tacho" stat -e page-faults -- true
echo

echo "2. real programs (gzip -c of 14 MB; sqlite3 summing 1e6 rows; python3 -c pass)"
sq="sqlite3 :memory: with recursive c(x) as (select 1 union all select x+1 from c where x<1000000) select sum(x) from c;"
r2=$((rounds / 10))

"$sb" time "$r2" gzip -c "$tmp/in.txt" ";" perf stat -- gzip -c "$tmp/in.txt" ";" \
	"$tacho" stat -- gzip -c "$tmp/in.txt"
"$sb" time "$r2" sqlite3 :memory: "${sq#sqlite3 :memory: }" ";" \
	perf stat -- sqlite3 :memory: "${sq#sqlite3 :memory: }" ";" \
	"$tacho" stat -- sqlite3 :memory: "${sq#sqlite3 :memory: }"
if command -v python3 >/dev/null; then
	"$sb" time "$r2" python3 -c pass ";" perf stat -- python3 -c pass ";" \
		"$tacho" stat -- python3 -c pass
fi
echo

echo "3. the cost of one group read"
"$sb" read 20000
echo

echo "4. agreement on software events: median of $reps interleaved runs under each tool"
ev=page-faults,context-switches,task-clock
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
agree() {
	# $1: label; the rest: the command. perf and tacho alternate, one run each, so
	# that the machine's other work falls on both alike.
	label=$1
	shift
	: >"$tmp/perf.csv"
	: >"$tmp/tacho.csv"
	i=0
	while [ $i -lt "$reps" ]; do
		perf stat -x, -e "$ev" -- "$@" >/dev/null 2>>"$tmp/perf.csv"
		"$tacho" stat --csv -e "$ev" -- "$@" >/dev/null 2>>"$tmp/tacho.csv"
		i=$((i + 1))
	done
	for e in page-faults context-switches task-clock; do
		p=$(awk -F, -v e="$e" '$3 == e { print $1 }' "$tmp/perf.csv" | median)
		t=$(awk -F, -v e="$e" '$1 == "event" && $2 == e { print $4 }' "$tmp/tacho.csv" | median)
		awk -v l="$label" -v e="$e" -v p="$p" -v t="$t" 'BEGIN {
			d = (p != 0) ? 100 * (t - p) / p : 0
			printf "  %-8s %-17s perf %14.3f  tacho %14.3f  difference %+7.2f%%\n", l, e, p, t, d }'
	done
}
agree gzip gzip -c "$tmp/in.txt"
agree sqlite3 sqlite3 :memory: "${sq#sqlite3 :memory: }"
if command -v python3 >/dev/null; then
	agree python3 python3 -c pass
fi
echo "(task-clock in msec; page-faults vary by a few between runs with address-space"
echo " randomization; context-switches depend on the machine's other work)"
if command -v setarch >/dev/null; then
	# without address-space randomization a program's page faults are the same on
	# every run: the two tools must then agree exactly
	p=$(setarch -R perf stat -x, -e page-faults -- gzip -c "$tmp/in.txt" 2>&1 >/dev/null |
		awk -F, '$3 == "page-faults" { print $1 }')
	t=$(setarch -R "$tacho" stat --csv -e page-faults -- gzip -c "$tmp/in.txt" 2>&1 >/dev/null |
		awk -F, '$1 == "event" { print $4 }')
	echo "  gzip page-faults with randomization off (setarch -R): perf $p, tacho $t" \
		"($( [ "$p" = "$t" ] && echo equal || echo DIFFERENT))"
fi
