#!/bin/sh
# perfdata.sh - tacho report reading perf's perf.data against perf report on the same
# file: interleaved pairs (tacho, then perf, N times), the median of the per-pair
# ratios, by symbol, with call chains (--children), the perf-script export against perf
# script; by line against perf report --sort srcline once (it takes minutes).
# usage: sh bench/perfdata.sh [BUILD] (default build); PAIRS=N (default 7); ROUNDS=N sets
# the workload's length (default 2400: about 4 CPU-seconds, 200k samples at one every
# 20 us);
# PERF_SRCLINE=0 skips the by-line pair. Results: docs/performance.md ("perf.data in").
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
pairs=${PAIRS:-7}
rounds=${ROUNDS:-2400}
tmp=$(mktemp -d /tmp/tacho-bench-perfdata.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
[ -x /usr/bin/time ] || { echo "perfdata.sh: GNU time is not installed (Debian: time)" >&2; exit 1; }
[ -x "$tacho" ] || { echo "perfdata.sh: build $tacho first (make BUILD=$b)" >&2; exit 1; }
command -v perf >/dev/null || { echo "perfdata.sh: perf is not installed" >&2; exit 1; }

# A CPU-bound workload of a few functions and many lines, with debug info and frame
# pointers so that both tools name functions, lines and callers.
cat > "$tmp/work.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
static unsigned long long rng = 88172645463325252ull;
static unsigned long long next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static int cmp(const void *a, const void *b) { int x = *(const int *)a, y = *(const int *)b; return (x > y) - (x < y); }
static void sort_ints(int *v, int n) { for (int i = 0; i < n; i++) v[i] = (int)next(); qsort(v, n, sizeof(*v), cmp); }
static unsigned crc(const unsigned char *p, int n) {
	unsigned c = ~0u;
	for (int i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}
static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) {
	long rounds = argc > 1 ? atol(argv[1]) : 10;
	static int v[20000]; static unsigned char buf[16384];
	unsigned long long sum = 0;
	for (long r = 0; r < rounds; r++) {
		sort_ints(v, 20000); sum += v[100];
		buf[r % 16384] = (unsigned char)r; sum += crc(buf, 16384);
		sum += (unsigned long long)fib(22);
	}
	printf("%llu\n", sum);
	return 0;
}
EOF
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/work" "$tmp/work.c"

# "WALL CPU" seconds of one run (CPU: user + system, which a loaded machine moves less)
secs() { /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >/dev/null 2>&1 || true; awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }' "$tmp/time"; }
med() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m }'; }
# pairs NAME FILE TACHO-REPORT-ARGS -- PERF-ARGS: interleaved runs, both reading FILE
# (-i); the medians of wall and CPU time, and the medians of the pairs' ratios
pairs() {
	name=$1; file=$2; shift 2
	targs=""; while [ "$1" != "--" ]; do targs="$targs $1"; shift; done; shift
	: > "$tmp/pairs"
	i=0
	while [ $i -lt "$pairs" ]; do
		# shellcheck disable=SC2086
		t=$(secs "$tacho" report -i "$file" $targs)
		p=$(secs perf "$@" -i "$file")
		echo "$t $p" >> "$tmp/pairs"
		i=$((i + 1))
	done
	col() { awk -v c="$1" '{ print $c }' "$tmp/pairs" | med; }
	ratio() { awk -v a="$1" -v b="$2" '{ print ($b > 0 ? $a / $b : 0) }' "$tmp/pairs" | med; }
	printf "   %s (median of %d pairs)\n" "$name" "$pairs"
	printf "      wall: tacho %s s, perf %s s, tacho/perf %s\n" "$(col 1)" "$(col 3)" "$(ratio 1 3)"
	printf "      CPU:  tacho %s s, perf %s s, tacho/perf %s\n" "$(col 2)" "$(col 4)" "$(ratio 2 4)"
}

echo "machine: $(uname -r), $(nproc) CPUs, $(perf --version), tacho $($tacho --version | cut -d' ' -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
perf record -q -e cpu-clock -c 20000 -o "$tmp/flat.data" -- "$tmp/work" "$rounds" >/dev/null 2>&1
perf record -q -g -e cpu-clock -c 20000 -o "$tmp/g.data" -- "$tmp/work" "$rounds" >/dev/null 2>&1
ns=$("$tacho" report -i "$tmp/flat.data" --json | awk -F'[:,]' '/"samples"/ { print $2; exit }' | tr -d ' ')
np=$(perf report -i "$tmp/flat.data" --stdio 2>/dev/null | awk '/^# Samples:/ { print $3; exit }')
echo "samples: tacho $ns, perf $np; files $(du -h "$tmp/flat.data" | cut -f1) and $(du -h "$tmp/g.data" | cut -f1) (-g)"
pairs "by symbol" "$tmp/flat.data" -- report --stdio --sort sym
pairs "-g, --children" "$tmp/g.data" --children -- report --stdio --children --sort sym
pairs "-g, perf-script export / perf script" "$tmp/g.data" --format perf-script -- script
if [ "${PERF_SRCLINE:-1}" = 0 ]; then
	echo "   by line: skipped (PERF_SRCLINE=0)"
else
	pairs=1
	pairs "by line (perf: --sort srcline)" "$tmp/flat.data" --sort line -- report --stdio --sort srcline
fi
