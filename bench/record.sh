#!/bin/sh
# record.sh - tacho record/report side by side with perf record/report, in one run:
#   1. `record -- true` wall time (the fixed cost, the stall at exit);
#   2. the slowdown of a CPU-bound program sampled on cpu-clock at 1 kHz and 4 kHz;
#   3. report time by symbol and by source line on recordings of the same workload.
# usage: sh bench/record.sh [BUILD] (default build); SECONDS_CPU=N sets the length of
# the recording for part 3 (default: 6 times the 1-second workload at 50 kHz);
# PERF_SRCLINE=0 skips `perf report --sort srcline`, which takes minutes.
# Results: docs/performance/record.md. Timings are medians on this machine only.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
secs=${SECONDS_CPU:-6}
tmp=$(mktemp -d /tmp/tacho-bench-record.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
[ -x "$tacho" ] || { echo "record.sh: build $tacho first (make BUILD=$b)" >&2; exit 1; }
command -v perf >/dev/null || { echo "record.sh: perf is not installed" >&2; exit 1; }

# A CPU-bound workload with many functions and lines, built with debug info and frame
# pointers so that both tools can name functions and lines.
cat > "$tmp/work.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
static void matmul(double *a, double *b, double *c, int n) {
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
}
static unsigned hash_words(char *s, int n) {
	unsigned h = 0;
	for (int i = 0; i < n; i++) {
		h = h * 31 + (unsigned char)s[i];
		if (s[i] == ' ')
			h ^= h >> 11;
	}
	return h;
}
static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) {
	long rounds = argc > 1 ? atol(argv[1]) : 10;
	static int v[20000]; static unsigned char buf[65536]; static double a[64 * 64], bb[64 * 64], c[64 * 64];
	static char text[65536];
	unsigned long long sum = 0;
	for (int i = 0; i < 64 * 64; i++) a[i] = bb[i] = i % 7;
	for (int i = 0; i < 65536; i++) text[i] = "the quick brown fox "[i % 20];
	for (long r = 0; r < rounds; r++) {
		sort_ints(v, 20000); sum += v[100];
		memset(buf, (int)r, sizeof(buf)); sum += crc(buf, 16384);
		matmul(a, bb, c, 64); sum += (unsigned long long)c[5];
		sum += hash_words(text, 65536);
		sum += (unsigned long long)fib(20);
	}
	printf("%llu\n", sum);
	return 0;
}
EOF
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/work" "$tmp/work.c"

now() { date +%s.%N; }
# median wall seconds of running "$@" N times (output discarded)
median() {
	n=$1; shift
	i=0
	: > "$tmp/times"
	while [ $i -lt $n ]; do
		t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >> "$tmp/times"
		i=$((i + 1))
	done
	sort -g "$tmp/times" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m }'
}
ms() { awk -v s="$1" 'BEGIN { printf "%.0f ms", s * 1000 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a - b) / b * 100 }'; }

echo "machine: $(uname -r), $(nproc) CPUs, $(perf --version), tacho $($tacho --version | cut -d' ' -f2)"
echo
echo "1. record -- true (wall, median of 10)"
t=$(median 10 "$tacho" record -q -o "$tmp/t.rec" -- true);            echo "   tacho record -- true                 $(ms "$t")"
t=$(median 10 perf record -q -o "$tmp/t.data" -- true);               echo "   perf record -- true                  $(ms "$t")"
t=$(median 10 perf record -q --no-bpf-event -o "$tmp/t.data" -- true); echo "   perf record --no-bpf-event -- true   $(ms "$t")"

# calibrate the workload to about 1 s
rounds=10
t=$(median 1 "$tmp/work" $rounds)
rounds=$(awk -v t="$t" -v r=$rounds 'BEGIN { n = int(r / t); print n < 1 ? 1 : n }')
echo
echo "2. slowdown of a CPU-bound program ($rounds rounds, cpu-clock; wall, median of 5)"
base=$(median 5 "$tmp/work" $rounds)
echo "   no sampling                          $(ms "$base")"
for hz in 1000 4000; do
	t=$(median 5 "$tacho" record -q -F $hz -o "$tmp/s.rec" -- "$tmp/work" $rounds)
	echo "   tacho record -F $hz                  $(ms "$t") ($(pct "$t" "$base"))"
	t=$(median 5 perf record -q -e cpu-clock -F $hz -o "$tmp/s.data" -- "$tmp/work" $rounds)
	echo "   perf record -e cpu-clock -F $hz      $(ms "$t") ($(pct "$t" "$base"))"
	t=$(median 5 perf record -q --no-bpf-event -e cpu-clock -F $hz -o "$tmp/s.data" -- "$tmp/work" $rounds)
	echo "   perf record --no-bpf-event ... -F $hz $(ms "$t") ($(pct "$t" "$base"))"
done

echo
echo "3. report time on recordings of the same workload (cpu-clock every 20 us, -g off)"
big=$(awk -v r=$rounds -v s=$secs 'BEGIN { print int(r * s) }')
"$tacho" record -q -c 20000 -o "$tmp/big.rec" -- "$tmp/work" $big >/dev/null
perf record -q -e cpu-clock -c 20000 -o "$tmp/big.data" -- "$tmp/work" $big >/dev/null 2>&1
ns=$("$tacho" report -i "$tmp/big.rec" --json | awk -F'[:,]' '/"samples"/ { print $2; exit }' | tr -d ' ')
np=$(perf report -i "$tmp/big.data" --stdio --sort sym 2>/dev/null | awk '/^# Samples:/ { print $3; exit }')
echo "   samples: tacho $ns, perf $np"
t=$(median 3 "$tacho" report -i "$tmp/big.rec");                              echo "   tacho report (by symbol)             $(ms "$t")"
t=$(median 3 perf report -i "$tmp/big.data" --stdio --sort sym);               echo "   perf report --sort sym               $(ms "$t")"
t=$(median 3 "$tacho" report -i "$tmp/big.rec" --sort line);                   echo "   tacho report --sort line             $(ms "$t")"
if [ "${PERF_SRCLINE:-1}" = 0 ]; then
	echo "   perf report --sort srcline           skipped (PERF_SRCLINE=0)"
else
	t=$(median 1 perf report -i "$tmp/big.data" --stdio --sort srcline); echo "   perf report --sort srcline           $(ms "$t")"
fi
