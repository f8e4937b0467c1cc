#!/bin/sh
# sim.sh - tacho stat --sim against bare valgrind --tool=callgrind with the same options,
# in one run (docs/performance/sim.md): interleaved runs, median wall time of each, on
# a tiny static program (the start-up dominates), a loop of 10^7 iterations (the
# simulation dominates) and gzip of 1 MB (a real program, dynamically linked).
#
#   bench/sim.sh [BUILD]        (BUILD: the build folder, default build)
# Needs valgrind and gzip; ROUNDS (default 21) sets the effort.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
kern=$b/tests/progs/sim-kernels
rounds=${ROUNDS:-21}
for f in "$tacho" "$kern"; do
	[ -x "$f" ] || { echo "sim.sh: $f is missing (make BUILD=$b tests)" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "sim.sh: valgrind is missing (scripts/deps.sh test)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seq 1 160000 > "$tmp/in.txt"     # 1 MB of text for gzip

# valgrind as tacho runs it: the same caches (from tacho's JSON), one output file per
# process, its messages in a log file
geo=$("$tacho" stat --sim --json -e instructions -- true 2>&1 >/dev/null |
	awk '/"(I1|D1|LL)": \{/ { c = $1; gsub(/[":]/, "", c) }
	     /"size"/ { s = $2 } /"ways"/ { w = $2 }
	     /"line_size"/ { l = $2; gsub(/,/, "", s); gsub(/,/, "", w); printf "--%s=%s,%s,%s ", c, s, w, l }')
vg="valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes $geo --trace-children=yes"
vg="$vg --callgrind-out-file=$tmp/cg.%p --log-file=$tmp/vg.%p"

echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tacho: $("$tacho" --version); $(valgrind --version); caches: $geo"
echo

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# wall milliseconds of one run of the command, its output thrown away
ms() {
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))
}

bench() {
	# $1: label; the rest: the program. valgrind and tacho alternate, one run each, so
	# that the machine's other work falls on both alike.
	label=$1
	shift
	: >"$tmp/vg.t"
	: >"$tmp/tacho.t"
	i=0
	while [ $i -lt "$rounds" ]; do
		# shellcheck disable=SC2086
		ms $vg -- "$@" >>"$tmp/vg.t"
		ms "$tacho" stat --sim -- "$@" >>"$tmp/tacho.t"
		rm -f "$tmp"/cg.* "$tmp"/vg.[0-9]*
		i=$((i + 1))
	done
	v=$(median <"$tmp/vg.t")
	t=$(median <"$tmp/tacho.t")
	awk -v l="$label" -v v="$v" -v t="$t" -v n="$rounds" 'BEGIN {
		printf "%s (%d interleaved runs each)\n  valgrind %9.1f ms   tacho stat --sim %9.1f ms   ratio %.3f\n\n",
			l, n, v / 1000, t / 1000, t / v }'
}

bench "1. a tiny static program: sim-kernels loop 10" "$kern" loop 10
bench "2. the loop, 10^7 iterations of 6 instructions" "$kern" loop 10000000
bench "3. gzip -c of 1 MB" gzip -c "$tmp/in.txt"
