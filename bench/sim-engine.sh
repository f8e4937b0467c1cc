#!/bin/sh
# sim-engine.sh - what `tacho stat --sim` runs for the events asked (docs/sim.md, "The
# engines"), against the bare valgrind it runs and against bare callgrind with both
# simulations (what every --sim run cost before): interleaved runs, median wall and
# median CPU time (user + system of every process), gzip -c of 1 MB.
#
#   bench/sim-engine.sh [BUILD]        (BUILD: the build folder, default build)
# Needs valgrind, gzip and GNU time (/usr/bin/time); ROUNDS (default 11) sets the effort.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
rounds=${ROUNDS:-11}
[ -x "$tacho" ] || { echo "sim-engine.sh: $tacho is missing (make BUILD=$b)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "sim-engine.sh: valgrind is missing" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "sim-engine.sh: GNU time is missing" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seq 1 160000 > "$tmp/in.txt"     # 1 MB of text for gzip
geo=$("$tacho" stat --sim --json -e L1-dcache-loads -- true 2>&1 >/dev/null |
	awk '/"(I1|D1|LL)": \{/ { c = $1; gsub(/[":]/, "", c) }
	     /"size"/ { s = $2 } /"ways"/ { w = $2 }
	     /"line_size"/ { l = $2; gsub(/,/, "", s); gsub(/,/, "", w); printf "--%s=%s,%s,%s ", c, s, w, l }')
vgo="--trace-children=yes --log-file=$tmp/vg.%p"
cg_none="valgrind --tool=callgrind --cache-sim=no --branch-sim=no --dump-before=execve --separate-recs=1 $vgo --callgrind-out-file=$tmp/o.%p"
cg_full="valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes $geo --dump-before=execve --separate-recs=1 $vgo --callgrind-out-file=$tmp/o.%p"
cache_none="valgrind --tool=cachegrind --cache-sim=no --branch-sim=no $vgo --cachegrind-out-file=$tmp/o.%p"
prog="gzip -c $tmp/in.txt"

echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tacho: $("$tacho" --version); $(valgrind --version); $rounds interleaved rounds"
echo

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# one run, output thrown away: "WALL_MS CPU_MS"
run() {
	t0=$(date +%s%N)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000)) $(tail -n 1 "$tmp/time" | awk '{ printf "%d", ($1 + $2) * 1000 }')"
	rm -f "$tmp"/o.* "$tmp"/vg.*
}

names="tacho-auto tacho-cachegrind callgrind-none callgrind-full cachegrind-none"
for n in $names; do : >"$tmp/$n.t"; done
i=0
while [ $i -lt "$rounds" ]; do
	# shellcheck disable=SC2086
	run "$tacho" stat --sim -e instructions -- $prog >>"$tmp/tacho-auto.t"
	# shellcheck disable=SC2086
	run $cg_none -- $prog >>"$tmp/callgrind-none.t"
	# shellcheck disable=SC2086
	run $cg_full -- $prog >>"$tmp/callgrind-full.t"
	# shellcheck disable=SC2086
	run "$tacho" stat --sim --sim-engine cachegrind -e instructions -- $prog >>"$tmp/tacho-cachegrind.t"
	# shellcheck disable=SC2086
	run $cache_none -- $prog >>"$tmp/cachegrind-none.t"
	i=$((i + 1))
done
for n in $names; do
	echo "$n $(cut -d' ' -f1 "$tmp/$n.t" | median) $(cut -d' ' -f2 "$tmp/$n.t" | median)"
done >"$tmp/med"
awk '{ w[$1] = $2; c[$1] = $3; printf "%-18s wall %7.0f ms   CPU %7.0f ms\n", $1, $2, $3 }
END {
	printf "\nratios of the medians (CPU; wall in brackets):\n"
	printf "  stat --sim -e instructions / bare callgrind --cache-sim=no --branch-sim=no  %.3f (%.3f)\n", c["tacho-auto"] / c["callgrind-none"], w["tacho-auto"] / w["callgrind-none"]
	printf "  stat --sim -e instructions / bare callgrind with both simulations          %.3f (%.3f)\n", c["tacho-auto"] / c["callgrind-full"], w["tacho-auto"] / w["callgrind-full"]
	printf "  stat --sim --sim-engine cachegrind / bare cachegrind --cache-sim=no        %.3f (%.3f)\n", c["tacho-cachegrind"] / c["cachegrind-none"], w["tacho-cachegrind"] / w["cachegrind-none"]
	printf "  stat --sim --sim-engine cachegrind / bare callgrind with both simulations  %.3f (%.3f)\n", c["tacho-cachegrind"] / c["callgrind-full"], w["tacho-cachegrind"] / w["callgrind-full"]
}' "$tmp/med"
