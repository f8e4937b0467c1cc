#!/bin/sh
# trace-period.sh - the regularity of a 1 ms period as tacho trace sees it: a program
# marks every 1 ms (clock_nanosleep to absolute times, 200 marks); the delta table's
# median must be 1 ms within 5 % (issue 16). A timing figure, so it is checked here and
# not by a test (the test checks the exact count: 200 marks, 199 deltas).
#
#   bench/trace-period.sh [BUILD]        (make tests first: it runs tests/progs/trace-marks)
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$(pwd)/$b/tacho
prog=$(pwd)/$b/tests/progs/trace-marks
[ -x "$prog" ] || { echo "trace-period.sh: $prog is not built (make BUILD=$b tests)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tacho" trace -q -o "$work/p.trace" -- "$prog" periodic
"$tacho" trace report -i "$work/p.trace" --format csv | awk -F, '
	$1 == "tick" && $2 == "tick" {
		printf "1 ms period: %d deltas, min %.1f us, median %.1f us, mean %.1f us, p99 %.1f us, max %.1f us\n",
			$4, $5 / 1e3, $6 / 1e3, $7 / 1e3, $8 / 1e3, $9 / 1e3
		off = ($6 - 1e6) / 1e6 * 100
		printf "median off by %+.2f %% (goal: within 5 %%): %s\n", off,
			(off < 5 && off > -5) ? "met" : "NOT met"
		found = 1
	}
	END { if (!found) { print "trace-period.sh: no tick row" > "/dev/stderr"; exit 1 } }'
