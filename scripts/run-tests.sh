#!/bin/bash
# run-tests.sh - run every test binary of one or more build trees, and the fuzz targets,
# as parallel jobs, and sum up.
#
#   scripts/run-tests.sh BUILD [BUILD...] [--fuzz FUZZDIR]
#
# Each test binary and each fuzz target is one job. A pool of $TEST_JOBS jobs at a time
# (default: two per CPU, 2 * nproc) runs them, the longest first: by the time each took
# last time (BUILD/test-logs/times, FUZZDIR/times), else fuzz targets, then e2e tests,
# then unit tests. Two per CPU because most tests spend much of their time waiting (for
# the programs they run, their sleeps, their files): on 2 cores the whole suite took
# 59 s with 4 jobs at a time and 85 s with 2, with the fuzz targets still running their
# whole time, though with less of a core each. A job's output goes to BUILD/test-logs/NAME.log (fuzz targets:
# FUZZDIR/NAME.log); a line says how it ended, with the reasons of its skipped tests.
# After the last job: the whole log of each failure, the totals of each tree, and as the
# last line "tests: N passed, N failed, N skipped" (a fuzz target counts as one test).
#
# A test binary runs with TACHO_BIN=BUILD/tacho and TACHO_BUILD=BUILD. BUILD/so is the
# shared-library variant of BUILD (the Makefile's tests-so): its tests run its tacho
# with BUILD's helper programs, examples and objects (TACHO_BUILD=BUILD), less the cases
# so_leave_out names (below: what build/so runs, and why).
#
# A fuzz target first runs every input of its corpus (fuzz/corpus/NAME without the
# "fuzz-") once, then fuzzes for FUZZ_SECONDS (default 8) from a copy of it.
set -u
cd "$(dirname "$0")/.."
src=$(pwd)
self=$src/scripts/run-tests.sh
shared=${TACHO_SHARED:-$(cd "$src/.." && pwd)/shared}
fuzz_seconds=${FUZZ_SECONDS:-8}

# Tests that cannot share the machine run alone, one after another, once the pool is
# done. test-golden, because two of its cases depend on a quiet machine: the
# regions table aligns its columns to the measured times, which gain a digit when the
# machine is busy; and the breakpoint recording expects exactly 1000 stores / 10 = 100
# samples, while tacho record counts a task with one event per CPU, each with its own
# period, so a program that migrates in the middle of its loop can give 99 (seen under
# load; never when pinned to one CPU). The rest share well: the breakpoint tests open
# per-task breakpoints (a task's four debug registers are its own; only CPU-wide
# breakpoints, which no test opens, would take them from every task), the CPU-wide
# counts (-C, TACHO_TARGET_CPUS) only assert lower bounds, and no other test asserts on
# a duration. Add a test here, with its reason, when it needs the machine to itself.
# test-cmd-watch too: its --cap test compares a program's rate capped with its rate
# uncapped three seconds before (25 % +- 7 points). A steady load falls on both alike
# (twenty runs out of twenty passed beside two busy loops and the other work of the
# machine, at load averages of 11 to 22), but the pool's own jobs starting and ending
# on the same two CPUs between the two measures moved it to 11 and 33 %.
# test-cmd-cache too: its live case holds the L1d and L2 the pointer chase finds within
# a step of sysfs's sizes, and another test's working set on the same core takes cache
# from the chase (seen once in the pool, in the sanitized tree: L1d at 0.84 and L2 at
# 0.71 of sysfs's sizes in all three runs).
alone=(test-golden test-cmd-watch test-cmd-cache)

# What build/so (the shared-library variant of build/) runs, and why. The variant links
# tacho, and the tests that use only the public API, with libtacho.so; its tacho is made
# of the same objects as build/'s (CLI_OBJ, and libtacho.so of the same LIB_OBJ as
# libtacho.a): what can differ there is the linking alone: the exported symbols and
# their versions, a second copy of the library's state, what the library loads at run
# time (libdw, libzstd, capstone, libmicrohttpd through dlopen) and its thread-local
# storage. Any case that goes through a command's way into the library proves those;
# a case that feeds the same way more data, or holds its output against an outside
# program at length (Prometheus, VictoriaMetrics, chromium, valgrind's simulations,
# llvm-mca, perf), proves nothing more there than in build/, where it runs (and again
# in build/asan). So build/so runs every test binary of its list, but leaves out of
# these its longest cases, which the table names; each says "SKIP: CASE: left out of
# this tree" in the summary, and a name here that is no case of its binary fails it
# (tests/lib/harness.c). What stays in build/so of them: serve's /metrics, OpenMetrics
# and history with promtool, --listen and bad input; trace's marks, spans, Chrome and
# SVG, drops, a killed trace, bad input; perf.data on stdin, compressed (libzstd),
# with call chains, DWARF stacks (libdw) and tracepoint payloads (libtraceevent); sim's
# exact loop, outputs, recordings and their exports, bad input; record's every other
# case; stat-breakdown's every case but the 100 runs of the kernel's per-thread counts
# (whose count is their point, kept whole in build/ and build/asan); watch's every case
# but --cap's two rates measured three seconds apart, which runs alone, after the pool,
# so that its seconds are the suite's seconds.
declare -A so_leave_out=(
	[test-cmd-serve]="test_prometheus_vm_page
		test_many_clients test_slow_and_idle_clients"
	[test-cmd-trace]="test_many_events test_svg_in_chromium test_scribbled_area"
	[test-perfdata]="test_page_faults_exact test_build_ids test_srcline_rows
		test_cpu_clock_split test_frequency_periods test_cut_and_damaged
		test_dimensions_and_exports test_sampled_cpus test_system_wide"
	[test-cmd-sim]="test_proof_loop_agrees_with_valgrind test_deterministic
		test_children_followed test_regions_exact test_hot_places test_loop_at_entry
		test_mca test_record_sim_pie test_report_mca"
	[test-cmd-record]="test_many_events test_page_faults_exact"
	[test-stat-breakdown]="test_per_thread_events_keep_their_counts"
	[test-cmd-watch]="test_cap_ratio"
)
so_why="it runs in build/ and build/asan (scripts/run-tests.sh says what build/so runs)"

abs() { case $1 in /*) echo "$1" ;; *) echo "$src/$1" ;; esac; }

# --- one job: "INDEX<TAB>KIND<TAB>TREE<TAB>PATH"; prints one block, writes its result ---
job() {
	local idx kind tree path
	IFS=$'\t' read -r idx kind tree path <<<"$1"
	local name t0 rc secs log p f s block links=0
	name=$(basename "$path")
	t0=$EPOCHREALTIME
	if [ "$kind" = fuzz ]; then
		local corpus=$src/fuzz/corpus/${name#fuzz-} work inputs=0 runs
		log=$tree/$name.log
		work=$(mktemp -d "${TMPDIR:-/tmp}/tacho-fuzz.XXXXXX")
		[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/ 2>/dev/null
		inputs=$(find "$work" -type f | wc -l)
		# every corpus input once (-runs=0: read and run the corpus, then stop), then
		# the fuzzing proper for its time budget
		"$path" -runs=0 -timeout=10 -rss_limit_mb=2048 "$work" >"$log" 2>&1 &&
			"$path" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
				"$work" >>"$log" 2>&1
		rc=$?
		rm -rf "$work"
		runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
		secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
		if [ $rc -ne 0 ]; then
			p=0 f=1 s=0
			block="FAIL fuzz $name (exit $rc, ${secs}s)"
		else
			p=1 f=0 s=0
			block="ok   fuzz $name ($inputs corpus inputs, then ${runs:-?} runs in ${fuzz_seconds}s)"
		fi
	else
		local home=$tree leave_out=
		case $tree in */so)
			[ -e "${tree%/so}/libtacho.a" ] && home=${tree%/so}
			leave_out=$(echo ${so_leave_out[$name]:-}) ;;
		esac
		log=$tree/test-logs/$name.log
		TACHO_BIN=$(abs "$tree")/tacho TACHO_BUILD=$(abs "$home") TACHO_SRC=$src \
			TACHO_SHARED=$shared \
			TACHO_TEST_LEAVE_OUT=$leave_out TACHO_TEST_LEAVE_OUT_WHY=${leave_out:+$so_why} \
			ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
			UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
			timeout 300 "$path" >"$log" 2>&1
		rc=$?
		secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		p=${p:-0} f=${f:-0} s=${s:-0}
		if [ $rc -ne 0 ] && [ "$f" = 0 ]; then
			f=1   # crashed, timed out or a sanitizer stopped it: count the binary as failed
		fi
		readelf -d "$path" 2>/dev/null | grep -q 'NEEDED.*\[libtacho\.so' && links=1
		if [ "$f" != 0 ]; then
			block="FAIL $tree/$name ($p passed, $f failed, $s skipped, exit $rc, ${secs}s)"
		else
			block="ok   $tree/$name ($p passed, $s skipped, ${secs}s)"
		fi
		# the cases a tree leaves out on one line, by name
		block+=$(awk '/^SKIP: .*: left out of this tree: / {
				n = $2; sub(/:$/, "", n); out = out " " n; next }
			/^SKIP: / { printf "\n     %s", $0 }
			END { if (out != "") printf "\n     left out of this tree:%s", out }' "$log")
		# a failure's own lines (cmocka's ERROR and LINE, a sanitizer's SUMMARY) right
		# under its name too, so that a log cut to its middle still says what failed
		if [ "$f" != 0 ]; then
			block+=$(awk '/^ERROR: |^\[  ERROR   \]|^\[  FAILED  \] test_|^SUMMARY: / {
				if (!seen[$0]++ && ++k <= 12) printf "\n     %s", $0 }' "$log")
		fi
	fi
	# one write per block, so that the lines of jobs ending together do not mix
	printf '%s\n' "$block"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$idx" "$kind" "$tree" "$name" "$p" "$f" \
		"$s" "$secs" "$links" >"$results/$idx"
}

if [ "${1:-}" = --job ]; then
	results=$2
	job "$3"
	exit 0
fi

builds=()
fuzzdir=
while [ $# -gt 0 ]; do
	case $1 in
	--fuzz) fuzzdir=${2:?--fuzz needs a folder}; shift 2 ;;
	*) builds+=("${1%/}"); shift ;;
	esac
done
[ ${#builds[@]} -gt 0 ] || builds=(build)
jobs=${TEST_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tacho-run-tests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
results=$tmp/results
mkdir -p "$results"
# The tests' caches (the build-id copies record makes of every program it samples, the
# kernel symbols' copy report keeps) go to a folder of this run, removed with it, not to
# the user's ~/.cache/tacho, which 1,600 tests would fill (254 MB seen). A test that
# checks the cache sets its own.
export XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$XDG_CACHE_HOME"

# The jobs, "ESTIMATE<TAB>INDEX<TAB>KIND<TAB>TREE<TAB>PATH" in the order of the summary.
# The estimate is the time of the last run, or a guess by kind that puts what is
# usually long first.
estimate() {   # TIMESFILE NAME GUESS
	local t
	t=$(awk -v n="$2" '$1 == n { t = $2 } END { print t }' "$1" 2>/dev/null)
	echo "${t:-$3}"
}
n=0
: >"$tmp/jobs"
: >"$tmp/alone"
for b in "${builds[@]}"; do
	if [ ! -d "$b" ]; then
		echo "run-tests: no build tree $b (build it first)" >&2
		exit 2
	fi
	mkdir -p "$b/test-logs"
	for t in "$b"/tests/unit/* "$b"/tests/e2e/*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		case $t in *.d | *.o) continue ;; esac
		name=$(basename "$t")
		# a job's log and time are kept by name: two binaries of one name in a
		# tree would hide one's failure behind the other's log
		if [ -e "$b/tests/unit/$name" ] && [ -e "$b/tests/e2e/$name" ]; then
			echo "run-tests: $b has a unit and an e2e test both named $name;" \
			     "rename one" >&2
			exit 2
		fi
		case $t in */e2e/*) guess=2 ;; *) guess=1 ;; esac
		n=$((n + 1))
		line=$(printf '%s\t%s\t%s\t%s\t%s' "$(estimate "$b/test-logs/times" "$name" $guess)" \
			$n test "$b" "$t")
		if [[ " ${alone[*]} " == *" $name "* ]]; then
			echo "$line" >>"$tmp/alone"
		else
			echo "$line" >>"$tmp/jobs"
		fi
	done
done
if [ -n "$fuzzdir" ]; then
	fuzzdir=${fuzzdir%/}
	for t in "$fuzzdir"/fuzz-*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		case $t in *.d | *.log) continue ;; esac
		n=$((n + 1))
		printf '%s\t%s\t%s\t%s\t%s\n' \
			"$(estimate "$fuzzdir/times" "$(basename "$t")" $((fuzz_seconds + 1)))" \
			$n fuzz "$fuzzdir" "$t" >>"$tmp/jobs"
	done
fi
if [ "$n" = 0 ]; then
	echo "run-tests: no test binaries in ${builds[*]} (make tests builds them)" >&2
	exit 2
fi

start=$EPOCHREALTIME
echo "run-tests: $n jobs, $jobs at a time"
sort -t$'\t' -k1,1gr -k2,2n "$tmp/jobs" | cut -f2- |
	xargs -d '\n' -r -n 1 -P "$jobs" "$self" --job "$results"
if [ -s "$tmp/alone" ]; then
	echo "run-tests: alone, one after another: $(cut -f5 "$tmp/alone" | xargs)"
	cut -f2- "$tmp/alone" | xargs -d '\n' -r -n 1 -P 1 "$self" --job "$results"
fi
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# The results in the order of the summary; the times for the next run's order.
sort -t$'\t' -k1,1n "$results"/* >"$tmp/all" 2>/dev/null
for b in "${builds[@]}" ${fuzzdir:+"$fuzzdir"}; do
	if [ "$b" = "$fuzzdir" ]; then times=$b/times; else times=$b/test-logs/times; fi
	awk -F'\t' -v b="$b" '$3 == b { print $4, $8 }' "$tmp/all" >"$times"
done
missing=$(( n - $(wc -l <"$tmp/all") ))

passed=0 failed=0 skipped=0
failed_names=()
while IFS=$'\t' read -r idx kind tree name p f s secs links; do
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$f" = 0 ] && continue
	if [ "$kind" = fuzz ]; then
		failed_names+=("fuzz/$name")
		echo
		echo "=== FAIL fuzz $name: $tree/$name.log from the first error"
		sed -n '/ERROR\|runtime error\|deadly signal\|SUMMARY\|Test unit written/,$p' \
			"$tree/$name.log" | sed 's/^/    /'
	else
		failed_names+=("$tree/$name")
		echo
		echo "=== FAIL $tree/$name: $tree/test-logs/$name.log"
		sed 's/^/    /' "$tree/test-logs/$name.log"
	fi
done <"$tmp/all"

echo
for b in "${builds[@]}" ${fuzzdir:+"$fuzzdir"}; do
	# what runs on libtacho.so: the tree's tacho, and the binaries that call it directly
	tacho_so=0
	readelf -d "$b/tacho" 2>/dev/null | grep -q 'NEEDED.*\[libtacho\.so' && tacho_so=1
	awk -F'\t' -v b="$b" -v tacho_so=$tacho_so '
	$3 == b { n++; p += $5; f += $6; s += $7; so += $9; kind = $2 }
	END {
		what = n (kind == "fuzz" ? " fuzz targets" : " test binaries")
		if (tacho_so)
			what = what ", its tacho and " so " of them linked with libtacho.so"
		else if (so)
			what = what ", " so " of them linked with libtacho.so"
		printf "%s: %s; %d passed, %d failed, %d skipped\n", b, what, p, f, s
	}' "$tmp/all"
done
echo "time: ${elapsed}s with $jobs jobs at a time"
if [ "$missing" -gt 0 ]; then
	echo "run-tests: $missing jobs gave no result (killed?)" >&2
	failed=$((failed + missing))
fi
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
