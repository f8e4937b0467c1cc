#!/bin/sh
# marks-throughput.sh - how many marks a second one thread gets through tacho trace, and
# what is lost (issue 32): tests/progs/trace-burst writes N marks at a rate asked (or as
# fast as it can), for some seconds, under `tacho trace`; each line says the rate asked,
# the rate the program reached, the marks that reached the file, the drops tacho
# reported (checked: arrived + dropped = sent), and the file's bytes per mark.
#
#   bench/marks-throughput.sh [BUILD] [SECONDS]      (make BUILD's tacho and tests first)
#   TACHO=/path/tacho PROG=/path/trace-burst bench/marks-throughput.sh    (another build)
#   RATES="1e6 2e7 max" RING=1048576 bench/marks-throughput.sh
#   FULL=wait bench/marks-throughput.sh   (--ring-full wait: none dropped; the rate reached
#                                          and the waits say what it cost the program)
# Then, when built (make benches), bench-trace-drain: each side's ns a mark alone.
set -eu
b=${1:-build}
secs=${2:-3}
cd "$(dirname "$0")/.."
tacho=${TACHO:-$(pwd)/$b/tacho}
prog=${PROG:-$(pwd)/$b/tests/progs/trace-burst}
rates=${RATES:-1e6 5e6 1e7 2e7 5e7 max}
[ -x "$prog" ] || { echo "marks-throughput.sh: $prog is not built (make BUILD=$b tests)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-8s %10s %12s %12s %12s %7s %9s %9s %s\n' asked reached/s sent arrived dropped lost% bytes/mk waited_ms accounted
for rate in $rates; do
	if [ "$rate" = max ]; then
		# as fast as it can: some 20 M a second on the machine of docs/performance.md
		n=$(awk -v s="$secs" 'BEGIN { printf "%d", 2e7 * s }')
		arg=""
	else
		n=$(awk -v r="$rate" -v s="$secs" 'BEGIN { printf "%d", r * s }')
		arg=$rate
	fi
	# shellcheck disable=SC2086
	"$tacho" trace ${RING:+--ring "$RING"} ${FULL:+--ring-full "$FULL"} -o "$work/m.trace" -- "$prog" "$n" $arg \
		>"$work/out" 2>"$work/err"
	bytes=$(stat -c %s "$work/m.trace")
	awk -v asked="$rate" -v bytes="$bytes" '
		FILENAME ~ /out$/ && $1 == "sent" { sent = $2; secs = $6 }
		FILENAME ~ /err$/ && / marks, .* events, in / { arrived = $2 }
		FILENAME ~ /err$/ && /marks were dropped/ { dropped = $3 }
		FILENAME ~ /err$/ && /waited for room/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ms") waited = $i
		}
		END {
			if (sent == "" || arrived == "") {
				print "marks-throughput.sh: no counts from the run" > "/dev/stderr"
				exit 1
			}
			printf "%-8s %10.3g %12d %12d %12d %7.2f %9.2f %9.1f %s\n", asked,
				sent / secs, sent, arrived, dropped, 100 * dropped / sent,
				arrived ? bytes / arrived : 0, waited,
				arrived + dropped == sent ? "yes" : "NO"
		}' "$work/out" "$work/err"
done
# each side's CPU cost alone, apart from the scheduling between them
drain=$(pwd)/$b/bench/bench-trace-drain
if [ -z "${TACHO:-}" ] && [ -x "$drain" ]; then
	echo
	"$drain" | awk -F '\t' '{ printf "%-40s %8s\n", $1, $2 }'
fi
