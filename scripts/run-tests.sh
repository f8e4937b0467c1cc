#!/bin/bash
# run-tests.sh - run every test binary of one or more build trees and sum up.
#
#   scripts/run-tests.sh BUILD [BUILD...] [--fuzz FUZZDIR]
#
# Each test binary runs with TACHO_BIN/TACHO_BUILD pointing at its own build tree; its
# output goes to BUILD/test-logs/NAME.log and is shown whole when it fails. Skipped
# tests print their reasons. The last line is "tests: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
src=$(pwd)
shared=${TACHO_SHARED:-$(cd "$src/.." && pwd)/shared}
builds=()
fuzzdir=
while [ $# -gt 0 ]; do
	case $1 in
	--fuzz) fuzzdir=$2; shift 2 ;;
	*) builds+=("$1"); shift ;;
	esac
done
[ ${#builds[@]} -gt 0 ] || builds=(build)

passed=0 failed=0 skipped=0
failed_names=()
start=$(date +%s)
for b in "${builds[@]}"; do
	case $b in /*) ab=$b ;; *) ab=$src/$b ;; esac
	logs=$b/test-logs
	mkdir -p "$logs"
	for t in "$b"/tests/unit/* "$b"/tests/e2e/*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		case $t in *.d) continue ;; esac
		name=$(basename "$t")
		log=$logs/$name.log
		t0=$EPOCHREALTIME
		TACHO_BIN=$ab/tacho TACHO_BUILD=$ab TACHO_SRC=$src TACHO_SHARED=$shared \
			ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
			UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
			timeout 300 "$t" >"$log" 2>&1
		rc=$?
		secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		p=${p:-0} f=${f:-0} s=${s:-0}
		if [ $rc -ne 0 ] && [ "$f" = 0 ]; then
			f=1   # crashed, timed out or a sanitizer stopped it: count the binary as failed
		fi
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
		if [ "$f" != 0 ]; then
			echo "FAIL $b/$name ($p passed, $f failed, $s skipped, exit $rc, ${secs}s)"
			sed 's/^/    /' "$log" | tail -80
			failed_names+=("$b/$name")
		else
			echo "ok   $b/$name ($p passed, $s skipped, ${secs}s)"
		fi
		grep '^SKIP: ' "$log" | sed 's/^/     /'
	done
done

if [ -n "$fuzzdir" ]; then
	for t in "$fuzzdir"/fuzz-*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		case $t in *.d) continue ;; esac
		name=$(basename "$t")
		corpus=$src/fuzz/corpus/${name#fuzz-}
		work=$(mktemp -d)
		[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/ 2>/dev/null
		log=$fuzzdir/$name.log
		"$t" -max_total_time="${FUZZ_SECONDS:-10}" -timeout=10 -rss_limit_mb=2048 \
			"$work" >"$log" 2>&1
		rc=$?
		runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1)
		rm -rf "$work"
		if [ $rc -ne 0 ]; then
			echo "FAIL fuzz $name (exit $rc)"
			grep -A30 -E 'ERROR|runtime error|SUMMARY' "$log" | head -60 | sed 's/^/    /'
			failed=$((failed + 1))
			failed_names+=("fuzz/$name")
		else
			echo "ok   fuzz $name (${runs:-no runs reported})"
			passed=$((passed + 1))
		fi
	done
fi

echo
echo "time: $(( $(date +%s) - start ))s"
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
