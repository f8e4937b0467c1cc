#!/bin/sh
# sim.sh - tacho stat --sim against bare valgrind --tool=callgrind with the same options,
# in one run (docs/performance/sim.md): interleaved runs, the median wall time and the
# median CPU time (user + system, of every process: what a loaded machine does not
# move much) of each, on a tiny static program (the start-up dominates), a loop of 10^7
# iterations (the simulation dominates) and gzip of 1 MB (a real program, dynamically
# linked); then tacho record --sim of the loop against valgrind with the per-instruction
# costs it asks for, and record --sim -g of gzip against valgrind with its call contexts.
#
#   bench/sim.sh [BUILD]        (BUILD: the build folder, default build)
# Needs valgrind, gzip and GNU time (/usr/bin/time); ROUNDS (default 21) sets the effort.
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
[ -x /usr/bin/time ] || { echo "sim.sh: GNU time is missing (scripts/deps.sh bench)" >&2; exit 1; }

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

# one run of the command, its output thrown away: "WALL_US CPU_MS" (CPU: user + system
# of the command and its children, as GNU time reads them from wait4)
run() {
	t0=$(date +%s%N)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000)) $(tail -n 1 "$tmp/time" | awk '{ printf "%d", ($1 + $2) * 1000 }')"
}

bench() {
	# $1: label, $2: the tacho command line's options before "--" (quoted as one word);
	# $3: valgrind's extra options; the rest: the program. valgrind and tacho alternate,
	# one run each, so that the machine's other work falls on both alike.
	label=$1
	topts=$2
	vextra=$3
	shift 3
	: >"$tmp/vg.t"
	: >"$tmp/tacho.t"
	i=0
	while [ $i -lt "$rounds" ]; do
		# shellcheck disable=SC2086
		run $vg $vextra -- "$@" >>"$tmp/vg.t"
		# shellcheck disable=SC2086
		run "$tacho" $topts -- "$@" >>"$tmp/tacho.t"
		rm -f "$tmp"/cg.* "$tmp"/vg.[0-9]* "$tmp/sim.rec"
		i=$((i + 1))
	done
	vw=$(cut -d' ' -f1 "$tmp/vg.t" | median)
	tw=$(cut -d' ' -f1 "$tmp/tacho.t" | median)
	vc=$(cut -d' ' -f2 "$tmp/vg.t" | median)
	tc=$(cut -d' ' -f2 "$tmp/tacho.t" | median)
	awk -v l="$label" -v vw="$vw" -v tw="$tw" -v vc="$vc" -v tc="$tc" -v n="$rounds" -v t="tacho $(echo "$topts" | cut -d' ' -f1-2)" 'BEGIN {
		printf "%s (%d interleaved runs each)\n", l, n
		printf "  wall: valgrind %9.1f ms   %s %9.1f ms   ratio %.3f\n", vw / 1000, t, tw / 1000, tw / vw
		printf "  CPU:  valgrind %9.1f ms   %s %9.1f ms   ratio %.3f\n\n", vc, t, tc, vc ? tc / vc : 0 }'
}

bench "1. a tiny static program: sim-kernels loop 10" "stat --sim" "" "$kern" loop 10
bench "2. the loop, 10^7 iterations of 6 instructions" "stat --sim" "" "$kern" loop 10000000
bench "3. gzip -c of 1 MB" "stat --sim" "" gzip -c "$tmp/in.txt"
# record --sim adds per-instruction costs (valgrind's too here), valgrind's load
# addresses (-v -v) and the recording it writes
bench "4. record --sim of the loop, 10^7 iterations" "record --sim -q -o $tmp/sim.rec" \
	"--dump-instr=yes" "$kern" loop 10000000
# -g: every function counted per chain of callers (valgrind's --separate-callers), and
# each sample written with its chain; gzip has a call tree worth the name
bench "5. record --sim -g of gzip -c of 1 MB" "record --sim -g -q -o $tmp/sim.rec" \
	"--dump-instr=yes --separate-callers=32" gzip -c "$tmp/in.txt"
