#!/bin/sh
# mark.sh - what tacho_mark costs, untraced and traced, beside a bare rdtsc and a region's
# begin/end pair; prints ns per call (medians of 41 rounds) and the ratios the goals of
# docs/trace.md are stated in (untraced mark <= 2x rdtsc; traced mark <= 1.5x a region
# edge, half a pair).
#
#   bench/mark.sh [BUILD]        (make benches first; `make bench` runs every script)
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
bin=$(pwd)/$b/bench/bench-mark
[ -x "$bin" ] || { echo "mark.sh: $bin is not built (make BUILD=$b benches)" >&2; exit 1; }
"$bin" | awk -F '\t' '
	{ v[$1] = $2; order[n++] = $1 }
	END {
		printf "%-40s %8s\n", "ns per call (median of 41 rounds)", "ns"
		for (i = 0; i < n; i++) printf "%-40s %8.2f\n", order[i], v[order[i]]
		r = v["bare rdtsc"]; mu = v["tacho_mark, not traced"]
		mt = v["tacho_mark, traced"]; pt = v["region begin/end pair, traced"]
		pu = v["region begin/end pair, not traced"]
		printf "\nuntraced mark / bare rdtsc                %6.2f  (goal <= 2)\n", mu / r
		printf "traced mark / untraced region edge        %6.2f\n", mt / (pu / 2)
		printf "traced mark / traced region edge          %6.2f  (goal <= 1.5)\n", mt / (pt / 2)
	}'
