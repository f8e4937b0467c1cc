#!/bin/bash
# fuzz-long.sh - long fuzzing, not part of the test command (`make fuzz-long`): each fuzz
# target in turn, for a set time, with one job and one worker, on its own corpus.
#
#   scripts/fuzz-long.sh FUZZDIR [SECONDS] [TARGET...]
#
# SECONDS per target (default FUZZ_LONG_SECONDS, else 600); a target also stops after
# FUZZ_LONG_RUNS executions (default 10,000,000: the goal of issue 10, which the fast
# targets reach well before their time is up). TARGET names (fuzz-x86len or x86len)
# choose some, else every FUZZDIR/fuzz-*. Targets run one after another, each in one
# process. A target starts from fuzz/corpus/NAME, and the inputs it finds that reach new
# code are kept in FUZZDIR/long/NAME/corpus for the next run (fuzz/corpus stays as
# committed; copy from there by hand what deserves it). libFuzzer's own log of each run
# is FUZZDIR/long/NAME/fuzz.log, a crash's input FUZZDIR/long/NAME/crash-*: two runs of
# this script side by side on different targets keep apart. One line per target says
# its executions, its rate and how it ended; the status is 1 when any target crashed.
set -u
cd "$(dirname "$0")/.."
src=$(pwd)
dir=${1:?usage: scripts/fuzz-long.sh FUZZDIR [SECONDS] [TARGET...]}
secs=${2:-${FUZZ_LONG_SECONDS:-600}}
runs_max=${FUZZ_LONG_RUNS:-10000000}
shift $(( $# >= 2 ? 2 : 1 ))
case $dir in /*) ;; *) dir=$src/$dir ;; esac

targets=()
if [ $# -gt 0 ]; then
	for t in "$@"; do targets+=("$dir/fuzz-${t#fuzz-}"); done
else
	for t in "$dir"/fuzz-*; do
		case $t in *.d) continue ;; esac
		[ -x "$t" ] && targets+=("$t")
	done
fi

failed=0
for t in "${targets[@]}"; do
	name=$(basename "$t")
	short=${name#fuzz-}
	work=$dir/long/$short
	if [ ! -x "$t" ]; then
		echo "$name: not built (make fuzz)"
		failed=1
		continue
	fi
	mkdir -p "$work/corpus"
	[ -d "fuzz/corpus/$short" ] && cp -rn "fuzz/corpus/$short"/. "$work/corpus"/
	rm -f "$work"/fuzz*.log "$work"/driver.log
	# one process, in this folder (the targets read paths relative to the repository
	# root: tests/data, build/tacho), its log in the target's own folder
	t0=$EPOCHREALTIME
	"$t" -max_total_time="$secs" -runs="$runs_max" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" >"$work/fuzz.log" 2>&1
	rc=$?
	log=$work/fuzz.log
	runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)/\1/p' "$log" | tail -1)
	took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
	crashes=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
		-o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
	if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ] || [ -z "$runs" ]; then
		failed=1
		echo "$name: FAILED (exit $rc, $crashes crash inputs in $work, ${runs:-?} runs in ${took}s; see $log)"
	else
		echo "$name: ${runs} executions in ${took}s ($(( runs / (took > 0 ? took : 1) ))/s), 0 crashes"
	fi
done
exit $failed
