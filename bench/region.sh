#!/bin/sh
# region.sh - tacho regions side by side with what they are made of and with PAPI:
# a time-only begin/end pair against a bare fenced TSC pair; a pair with four software
# events against two group reads of those four and against PAPI_read and PAPI's
# high-level regions on the same events. Prints ns per begin/end pair (medians of 41
# rounds) and the ratios the goals are stated in (docs/performance/regions.md).
#
#   bench/region.sh [BUILD]        (make benches first; `make bench` runs every script)
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
bin=$(pwd)/$b/bench/bench-region
[ -x "$bin" ] || { echo "region.sh: $bin is not built (make BUILD=$b benches)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# PAPI's high-level API writes papi_hl_output/ in the current folder at exit
cd "$work"
{
	"$bin" tsc
	"$bin" events
	"$bin" papi-hl
} > results.tsv
awk -F '\t' '
	{ v[$1] = $2; order[n++] = $1 }
	END {
		printf "%-44s %10s\n", "ns per begin/end pair (median of 41 rounds)", "ns"
		for (i = 0; i < n; i++) printf "%-44s %10.1f\n", order[i], v[order[i]]
		tsc = v["bare lfence;rdtsc + lfence;rdtsc;lfence"]; rt = v["tacho region, time only"]
		g = v["two group reads of 4 events"]; re = v["tacho region, 4 events"]
		pr = v["PAPI_read x2, 4 events"]; ph = v["PAPI_hl_region_begin/end, 4 events"]
		g2 = v["two group reads of 4 events (papi-hl run)"]
		printf "\n"
		if (tsc > 0) printf "time only: region / bare TSC pair          %5.2fx  (goal <= 2)\n", rt / tsc
		if (g > 0) printf "4 events:  region / two group reads        %5.2fx  (goal <= 1.2)\n", re / g
		if (re > 0 && pr > 0) printf "4 events:  PAPI_read x2 / region           %5.2fx\n", pr / re
		if (re > 0 && g2 > 0 && ph > 0)
			printf "4 events:  PAPI_hl region / region         %5.2fx  (each against the group reads of its own run)\n", (ph / g2) / (re / g)
	}' results.tsv
