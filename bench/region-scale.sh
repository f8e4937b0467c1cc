#!/bin/sh
# region-scale.sh - regions at scale (issue 32, item 6): a program that begins and ends
# 80,000 names once each and writes its JSON report at exit (TACHO_OUTPUT), as a whole:
# wall and CPU seconds of the run (/usr/bin/time), and within it the first use of a
# name (us), a second use (us) and the snapshot (ms) in a run without the report.
# Medians of ROUNDS runs (default 7). TACHO_EVENTS, if set, adds its events to each
# region (e.g. task-clock,page-faults,context-switches,cpu-migrations).
#
#   bench/region-scale.sh [BUILD]        (make benches first)
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
bin=$(pwd)/$b/bench/bench-region
[ -x "$bin" ] || { echo "region-scale.sh: $bin is not built (make BUILD=$b benches)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "region-scale.sh: /usr/bin/time is missing (scripts/deps.sh bench)" >&2; exit 1; }
rounds=${ROUNDS:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
i=0
while [ $i -lt "$rounds" ]; do
	TACHO_OUTPUT=$work/r.json /usr/bin/time -f 'whole program, JSON report at exit (wall s)\t%e\nwhole program, JSON report at exit (CPU s)\t%U %S' \
		-o "$work/t" "$bin" scale-exit
	TACHO_OUTPUT=none "$bin" scale >> "$work/in"
	awk -F '\t' '{ if (split($2, p, " ") == 2) $2 = p[1] + p[2]; print $1 "\t" $2 }' "$work/t" >> "$work/in"
	i=$((i + 1))
done
[ -s "$work/r.json" ] || { echo "region-scale.sh: no report was written" >&2; exit 1; }
echo "report at exit: $(wc -c < "$work/r.json") bytes, $(grep -c '"per_thread"' "$work/r.json") regions; TACHO_EVENTS='${TACHO_EVENTS:-}'"
sort -t '	' -k1,1 -k2,2g "$work/in" | awk -F '\t' '
	{ v[$1, ++n[$1]] = $2; if (n[$1] == 1) order[m++] = $1 }
	END { for (i = 0; i < m; i++) { k = order[i]; c = n[k]
		printf "%-46s median %8.3f  (min %.3f, max %.3f, %d runs)\n", k, v[k, int((c + 1) / 2)], v[k, 1], v[k, c], c } }'
