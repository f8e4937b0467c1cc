#!/bin/sh
# report-sizes.sh - tacho report against perf report at every size the issue names:
# recordings of about 10k, 100k and 600k samples of three programs, each recorded by
# each tool, with and without call chains (-g):
#   small   a generated C program of 400 functions (-O1 -g, frame pointers);
#   big     a generated C program of 20,000 functions with DWARF (-O1 -g);
#   python3 the interpreter and its libraries running a loop.
# For each recording: report by symbol (perf report --stdio --sort sym; with -g perf's
# --no-children -g none, tacho's default is flat too) in interleaved pairs (bench-pairs:
# the median of the per-round CPU-time ratios, min and max); with -g the folded export
# against perf script; peak RSS of each report (GNU time, median of 3); bytes per
# sample of each file.
# Programs run until a CPU-time budget, sampled on cpu-clock every 25 us (40 kHz), so
# that SIZES (default "10000 100000 600000") are the samples asked for; PAIRS (default
# 5) the rounds of each pair.
# usage: sh bench/report-sizes.sh [BUILD] (default build). Results: docs/performance.md,
# "Issue 13", report rows. Timings are medians on this machine only.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$(pwd)/$b/tacho
pairs=$(pwd)/$b/bench/bench-pairs
rounds=${PAIRS:-5}
sizes=${SIZES:-10000 100000 600000}
for f in "$tacho" "$pairs"; do
	[ -x "$f" ] || { echo "report-sizes.sh: $f is missing (make BUILD=$b all benches)" >&2; exit 1; }
done
for c in perf python3 cc; do
	command -v $c >/dev/null || { echo "report-sizes.sh: $c is missing (scripts/deps.sh bench)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "report-sizes.sh: GNU time is missing (scripts/deps.sh bench)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/tacho-bench-sizes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"   # the kernel's symbols copied once, as after a first report

# generated programs: N functions, each a little arithmetic, called round-robin until
# the CPU time given in ms has been spent
gen() {   # NAME N
	awk -v n="$2" 'BEGIN {
		print "#include <stdlib.h>\n#include <time.h>"
		print "volatile unsigned long sink;"
		for (i = 0; i < n; i++)
			printf "__attribute__((noinline)) void f%d(unsigned long x) { for (int k = 0; k < 20; k++) x = x * 6364136223846793005ul + %d; sink += x; }\n", i, i
		printf "static void (*const fns[%d])(unsigned long) = {", n
		for (i = 0; i < n; i++)
			printf "%sf%d", i ? "," : "", i
		print "};"
		print "static double cpu_ms(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }"
		printf "int main(int argc, char **argv) { double end = atof(argv[1]); unsigned long i = 0;\n"
		printf "\twhile (cpu_ms() < end) for (int k = 0; k < 1000; k++, i++) fns[i %% %d](i);\n\treturn 0; }\n", n
	}' > "$tmp/$1.c"
	cc -O1 -g -fno-omit-frame-pointer -o "$tmp/$1" "$tmp/$1.c"
}
gen small 400
gen big 20000
cat > "$tmp/loop.py" <<'EOF'
import sys, time
end = float(sys.argv[1]) / 1000
d = {}
while time.process_time() < end:
    for i in range(1000):
        d[i % 97] = str(i) + "x"
EOF

cmd_of() {   # PROGRAM MS
	case $1 in
	python3) echo "python3 $tmp/loop.py $2" ;;
	*) echo "$tmp/$1 $2" ;;
	esac
}
show() {
	awk -F '\t' -v w="$1" '{ printf "   %-26s CPU %8.2f vs %8.2f ms  %.2fx (%.2f-%.2f)\n", w, $8, $9, $10, $11, $12 }'
}
rss() {   # command... : the median peak RSS of 3 runs, KiB
	for i in 1 2 3; do
		/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1
	done | sort -n | sed -n 2p
}
tacho_n() { "$tacho" report -i "$1" 2>/dev/null | head -1 | sed 's/^# \([0-9,]*\) samples.*/\1/' | tr -d ,; }
perf_n() { perf report -D -i "$1" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE'; }

echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $rounds pairs each"
for prog in small big python3; do
	for n in $sizes; do
		ms=$((n / 40))   # 40 samples a ms of CPU
		for g in "" "-g"; do
			t="$tmp/t.rec"
			p="$tmp/p.data"
			rm -f "$t" "$p"
			# shellcheck disable=SC2046
			"$tacho" record -q $g -e cpu-clock -c 25000 -o "$t" -- $(cmd_of $prog $ms) >/dev/null
			# shellcheck disable=SC2046
			perf record -q $g -e cpu-clock -c 25000 -o "$p" -- $(cmd_of $prog $ms) >/dev/null 2>&1
			tn=$(tacho_n "$t")
			pn=$(perf_n "$p")
			echo "$prog, $n asked${g:+, -g}: tacho $tn samples, perf $pn"
			"$tacho" report -i "$t" >/dev/null 2>&1   # the kernel's symbols, once
			if [ -z "$g" ]; then
				"$pairs" "$rounds" "$tacho" report -i "$t" ";" \
					perf report -i "$p" --stdio --sort sym | show "by symbol"
			else
				"$pairs" "$rounds" "$tacho" report -i "$t" ";" \
					perf report -i "$p" --stdio --sort sym --no-children -g none |
					show "by symbol"
				"$pairs" "$rounds" "$tacho" report -i "$t" --format folded ";" \
					perf script -i "$p" | show "folded vs perf script"
			fi
			tr=$(rss "$tacho" report -i "$t")
			if [ -z "$g" ]; then
				pr=$(rss perf report -i "$p" --stdio --sort sym)
			else
				pr=$(rss perf report -i "$p" --stdio --sort sym --no-children -g none)
			fi
			awk -v a="$tr" -v b="$pr" 'BEGIN { printf "   %-26s %d vs %d KiB  %.2fx\n", "peak RSS", a, b, a / b }'
			awk -v a="$(stat -c %s "$t")" -v b="$(stat -c %s "$p")" -v x="$tn" -v y="$pn" \
				'BEGIN { printf "   %-26s %.1f vs %.1f  %.2fx\n", "bytes per sample", a / x, b / y, (a / x) / (b / y) }'
		done
	done
done
