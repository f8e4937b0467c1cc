#!/bin/sh
# record-lost.sh - samples lost at a high rate with call chains (issue 32, item 8):
# `tacho record -F RATE -g` with its default rings (sized from the rate and -g), with
# -m 128 (the fixed default before, perf's unprivileged default), and `perf record -F
# RATE -g` with its defaults, on the same busy program (two threads recursing 30 frames
# deep for 2 s of CPU each), in turns, ROUNDS times (default 5). Each line: the samples
# written and lost, read back from each file's header by tacho report (which reads
# perf.data too), and for tacho the losses per CPU from its summary line.
#
#   bench/record-lost.sh [BUILD]     RATE (default 40000), ROUNDS (default 5)
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$(pwd)/$b/tacho
rate=${RATE:-40000}
rounds=${ROUNDS:-5}
[ -x "$tacho" ] || { echo "record-lost.sh: build $tacho first (make BUILD=$b)" >&2; exit 1; }
command -v perf >/dev/null || { echo "record-lost.sh: perf is not installed (scripts/deps.sh bench)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/tacho-bench-lost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/busy.c" <<'EOF2'
#include <pthread.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long rec(int d)
{
	if (!d) {
		for (int i = 0; i < 200; i++)
			sink += (unsigned long)i;
		return sink;
	}
	return rec(d - 1) + 1;
}
static void *spin(void *a)
{
	struct timespec t;
	do {
		rec(30);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while (t.tv_sec < 2);
	return a;
}
int main(void)
{
	pthread_t th;
	pthread_create(&th, 0, spin, 0);
	spin(0);
	pthread_join(th, 0);
	return 0;
}
EOF2
cc -O2 -fno-omit-frame-pointer -pthread -o "$tmp/busy" "$tmp/busy.c"
head() { "$tacho" report -i "$1" 2>/dev/null | sed -n 's/^# \([0-9,]*\) samples.*, \([0-9,]*\) lost.*/\1 \2/p' | tr -d ,; }
printf '%-28s %5s %10s %8s  %s\n' "recorder" "round" "samples" "lost" "tacho's summary"
i=1
while [ $i -le "$rounds" ]; do
	"$tacho" record -F "$rate" -g -o "$tmp/t.rec" -- "$tmp/busy" 2> "$tmp/t.err" >/dev/null
	set -- $(head "$tmp/t.rec")
	printf '%-28s %5d %10s %8s  %s\n' "tacho record (default)" $i "$1" "$2" \
		"$(grep -o '[0-9]* lost[^,]*([^)]*)\|rings of [0-9]* pages' "$tmp/t.err" | tr '\n' ' ')"
	"$tacho" record -F "$rate" -g -m 128 -o "$tmp/m.rec" -- "$tmp/busy" 2> "$tmp/m.err" >/dev/null
	set -- $(head "$tmp/m.rec")
	printf '%-28s %5d %10s %8s  %s\n' "tacho record -m 128" $i "$1" "$2" \
		"$(grep -o '[0-9]* lost ([^)]*)' "$tmp/m.err" | tr '\n' ' ')"
	perf record -q -F "$rate" -g -o "$tmp/p.data" -- "$tmp/busy" 2>/dev/null >/dev/null
	set -- $(head "$tmp/p.data")
	printf '%-28s %5d %10s %8s\n' "perf record (default -m)" $i "$1" "$2"
	i=$((i + 1))
done
