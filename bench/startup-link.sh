#!/bin/sh
# startup-link.sh - what the link of tacho changes in its start-up (issue 32, item 7):
# `tacho stat -e page-faults -- true` against `perf stat -e page-faults -- true`, for
# the binary as the Makefile links it and relinked from the same objects with one
# option more each: -z now (every symbol bound at load, no lazy PLT), -z
# pack-relative-relocs (the 4,000 relative relocations of a PIE as a bitmap, DT_RELR)
# and --as-needed. Each: build/bench/bench-pairs's interleaved median ratio (CPU and
# wall), then `perf stat -r` of each for the user and system (kernel) times apart.
#
#   bench/startup-link.sh [BUILD]     (default build; needs perf and bench-pairs built)
# ROUNDS (default 200) pairs per variant; REPS (default 50) for perf stat -r.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-200}
reps=${REPS:-50}
[ -x "$b/tacho" ] && [ -x "$b/bench/bench-pairs" ] ||
	{ echo "startup-link.sh: make $b/tacho $b/bench/bench-pairs first" >&2; exit 1; }
command -v perf >/dev/null || { echo "startup-link.sh: perf is missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objs=$(find "$b/cli" -name '*.o' | sort)
libs="$(pkg-config --libs libtraceevent 2>/dev/null || echo -ltraceevent) $(pkg-config --libs zlib 2>/dev/null || echo -lz) -lm -lpthread -ldl"
# shellcheck disable=SC2086
{
	cc -o "$tmp/base" $objs "$b/libtacho.a" $libs
	cc -Wl,-z,now -o "$tmp/now" $objs "$b/libtacho.a" $libs
	cc -Wl,-z,pack-relative-relocs -o "$tmp/relr" $objs "$b/libtacho.a" $libs
	cc -Wl,--as-needed -o "$tmp/as-needed" $objs "$b/libtacho.a" $libs
}
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "failed execve in one 'stat -- true': $(strace -f -e trace=execve "$tmp/base" stat -e page-faults -- true 2>&1 | grep -c 'execve(.*= -1')"
for v in base now relr as-needed; do
	echo "$v: $(readelf -d "$tmp/$v" | grep -c NEEDED) libraries, $(readelf -r "$tmp/$v" | grep -c 'R_X86_64_') relocations in tables"
done
echo
printf 'variant\tvs\tA_ms\tB_ms\tratio\tmin\tmax\t(wall, then CPU)\n'
for v in base now relr as-needed; do
	"$b/bench/bench-pairs" "$rounds" "$tmp/$v" stat -e page-faults -- true ';' \
		perf stat -e page-faults -- true | awk -v v="$v" -F'\t' \
		'{ printf "%s\tperf\twall %s %s %s (%s-%s)\tCPU %s %s %s (%s-%s)\n", v, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
done
for v in now relr as-needed; do
	"$b/bench/bench-pairs" "$rounds" "$tmp/$v" stat -e page-faults -- true ';' \
		"$tmp/base" stat -e page-faults -- true | awk -v v="$v" -F'\t' \
		'{ printf "%s\tbase\twall %s %s %s (%s-%s)\tCPU %s %s %s (%s-%s)\n", v, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }'
done
echo
echo "user and system time, mean of $reps (perf stat -r):"
for c in "$tmp/base" "$tmp/now" "$tmp/relr" "$tmp/as-needed" perf; do
	perf stat -r "$reps" -x, -e user_time,system_time -- "$c" stat -e page-faults -- true 2>&1 >/dev/null |
		awk -F, -v c="$(basename "$c")" '/user_time/ { u = $1 } /system_time/ { s = $1 }
			END { printf "  %-10s user %.2f ms  sys %.2f ms  (kernel %.0f%%)\n", c, u / 1e6, s / 1e6, 100 * s / (u + s) }'
done
