#!/bin/bash
# capture.sh - the outputs of tacho's commands on fixed inputs, with the fields that are
# measurements masked, so that two builds can be compared byte for byte.
#
#   tests/golden/capture.sh OUTDIR [--machine]
#
# Uses $TACHO_BIN (default build/tacho) and $TACHO_BUILD (default build) for the test
# programs and examples. Every case is deterministic on any x86-64 Linux with tracefs:
# exact events only (breakpoints, page faults of a static non-PIE program with ASLR
# off, tracepoints, uprobes), CPUID dumps from files, recordings of uprobe and
# breakpoint samples. The cases named bp-* need data breakpoints that fire: with
# GOLDEN_BREAKPOINTS=0 (a machine whose hypervisor delivers none) they are left out,
# and the same outputs with the breakpoint made not to fire (TACHO_TEST_NOT_FIRING)
# are kept on every machine instead. With
# --machine it also captures what depends on this machine (cpu live, doctor, list with
# probing): for comparing a build before and after a change on one machine, not for
# keeping. tests/e2e/test-golden.c runs it and compares with tests/golden/expected/.
set -u
out=${1:?usage: capture.sh OUTDIR [--machine]}
machine=${2:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
shared=${TACHO_SHARED:-$src/../shared}
bin=${TACHO_BIN:-$src/build/tacho}
build=${TACHO_BUILD:-$src/build}
case $bin in /*) ;; *) bin=$src/$bin ;; esac
case $build in /*) ;; *) build=$src/$build ;; esac
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# record's build-id cache (docs/buildid-cache.md) in the work folder, not the user's
export XDG_CACHE_HOME=$work/cache

# Masks what is measured rather than counted, and the paths of this checkout.
norm() {
	sed -E \
		-e "s#$build#BUILD#g" -e "s#$src#SRC#g" -e "s#$work#WORK#g" \
		-e 's/[0-9]+\.[0-9]{4,}(e[-+]?[0-9]+)?/<F>/g' \
		-e 's/[0-9][0-9.,]* ?[kMG]?\/sec/<R>\/sec/g' \
		-e 's/[0-9][0-9.]* CPUs/<N> CPUs/g' \
		-e 's/ +(<[A-Z]>)/ \1/g' \
		-e 's/^(\S+) [0-9]+\/[0-9]+ \[[0-9]+\] <F>:/\1 PID\/TID [CPU] TIME:/' \
		-e 's/^(\S+) [0-9]+\/[0-9]+ \[[0-9]+\] [0-9.]+:/\1 PID\/TID [CPU] TIME:/' |
	awk '
	# JSON keys whose values are measurements: the number, or a whole object
	# ("ticks": {...}), becomes "<M>"
	BEGIN { depth = -1 }
	{
		if (depth >= 0) {
			line = $0
			gsub(/-?[0-9][0-9.e+-]*/, "<M>", line)
			print line
			if ($0 ~ /^[ ]*}/ && match($0, /[^ ]/) - 1 == depth) depth = -1
			next
		}
		if (match($0, /"(time_ns|exclusive_ns|wall_s|tid|pid|time|elapsed_ns|enabled_ns|running_ns|ns|tsc_hz|ticks_per_ns|read_ns|resolution_ns|overhead_ticks|start_ns)": /)) {
			sub(/: -?[0-9][0-9.e+-]*/, ": <M>")
		}
		# CPU times: 0.0 or a masked <F>, whichever the run gave; the TSC rate and
		# where it came from, which depend on the machine (a calibration gives a
		# fraction, a guest kernel an integer)
		if (match($0, /"(user_s|sys_s|tsc_hz)": /)) { sub(/: [^,]*/, ": <M>") }
		if (match($0, /"tsc_hz_source": /)) { sub(/: "[^"]*"/, ": \"<S>\"") }
		if ($0 ~ /"(ticks|ns)": \{$/) { depth = match($0, /[^ ]/) - 1 }
		print
	}'
}

run() {   # run NAME CMD...: stdout and stderr, normalized, and the exit status
	local name=$1
	shift
	"$@" >"$work/o" 2>"$work/e"
	local rc=$?
	{
		norm <"$work/o"
		echo "--- stderr"
		norm <"$work/e"
		echo "--- exit $rc"
	} >"$out/$name"
}

H=$build/tests/progs/stat-helper
BP=$build/tests/progs/sample-bp
norandom="setarch -R"

# cpu: three dumps, as tables (two as JSON too)
epyc=$src/tests/data/cpuid/kvm-epyc-2cpu.cpuid-r
adl=$shared/data/libcpuid/intel/x86-64/golden-cove/12th-gen-intel-core-i9-12900k.test
run cpu-epyc.txt "$bin" cpu --load "$epyc"
run cpu-epyc.json "$bin" cpu --load "$epyc" --json
run cpu-12900k.txt "$bin" cpu --load "$adl"
run cpu-12900k.json "$bin" cpu --load "$adl" --json
run cpu-12900k-cpu3.txt "$bin" cpu --load "$adl" --cpu 3
run cpu-zen5-bhyve.txt "$bin" cpu --load "$src/tests/data/cpuid/bhyve-zen5-2cpu.cpuid-r"

bp=${GOLDEN_BREAKPOINTS:-1}

# stat: exact events of the static helper (ASLR off: the same start-up every run)
addr=$("$H" addr)
ev="mem:$addr:w,syscalls:sys_enter_write,page-faults"
if [ "$bp" = 1 ]; then
	run bp-stat-stores.txt $norandom "$bin" stat -e "$ev" -- "$H" stores 1000
	run bp-stat-writes.csv $norandom "$bin" stat --csv -e "$ev" -- "$H" writes 41
	run bp-stat-writes-x.csv $norandom "$bin" stat -x ';' -e "$ev" -- "$H" writes 41
	run bp-stat-stores-r3.json $norandom "$bin" stat --json -r 3 -e "$ev" -- "$H" stores 777
	run bp-stat-stores-r3.txt $norandom "$bin" stat -r 3 -e "$ev" -- "$H" stores 777
	run bp-stat-five-bp.json $norandom "$bin" stat --json -e "mem:$addr:w,mem:$addr:w,mem:$addr:w,mem:$addr:w,mem:$addr:w" -- "$H" stores 50
fi
# the same where the breakpoint never fires (here by the switch, on every machine): no
# number for it anywhere, the reason once. The cases kept on every machine count
# system calls, not the start-up's page faults: how many pages a kernel maps around
# each fault differs between kernels (24 here, 25 there, for the same binary).
silent="env TACHO_TEST_NOT_FIRING=breakpoint-data"
ev2="mem:$addr:w,syscalls:sys_enter_write,syscalls:sys_enter_exit_group"
run stat-stores-silent.txt $silent $norandom "$bin" stat -e "$ev2" -- "$H" stores 1000
run stat-stores-silent.json $silent $norandom "$bin" stat --json -r 3 -e "$ev2" -- "$H" stores 777
run stat-stores-silent.csv $silent $norandom "$bin" stat --csv -e "$ev2" -- "$H" writes 41
run stat-exit3.txt $norandom "$bin" stat -e syscalls:sys_enter_exit_group -- "$H" exit 3
run stat-bad-event.txt "$bin" stat -e 'page-faults,nosuch:event' -- "$H" exit 0
run stat-noprog.txt "$bin" stat -e page-faults -- /nonexistent/program

# list: no probing (what opens depends on the machine)
run list-software.txt "$bin" list --no-probe --source software,breakpoint
run list-software.json "$bin" list --no-probe --json --source software,breakpoint
run list-pattern.txt "$bin" list --no-probe --source hardware,cache,software faults

# record + report: breakpoint samples, exact. On one CPU: an event opened per CPU counts
# its period on each CPU apart, so a program that migrates mid-way can give one sample
# less (499 + 501 stores make 49 + 50 samples of period 10, not 100).
baddr=$("$BP" --addr)
if [ "$bp" = 1 ]; then
	taskset -c 0 $norandom "$bin" record -q -e "mem:$baddr:w" -c 10 -o "$work/bp.rec" -- "$BP" 1000 >/dev/null 2>&1
	for s in symbol dso line address; do
		run bp-report-$s.txt "$bin" report -i "$work/bp.rec" --sort $s
		run bp-report-$s.json "$bin" report -i "$work/bp.rec" --sort $s --json
	done
	run bp-report-annotate.txt "$bin" report -i "$work/bp.rec" --annotate store_loop
	run bp-report-annotate.json "$bin" report -i "$work/bp.rec" --annotate store_loop --json
	run bp-report-folded.txt "$bin" report -i "$work/bp.rec" --format folded
	run bp-report-script.txt sh -c "\"$bin\" report -i \"$work/bp.rec\" --format perf-script | head -12"
fi
# a breakpoint that never fires is refused before the program runs: no recording
run record-silent.txt $silent "$bin" record -q -e "mem:$baddr:w" -c 10 -o "$work/none.rec" -- "$BP" 1000
# uprobe samples, exact anywhere uprobes work: every call of work() and of leaf()
UP=$build/tests/progs/uprobe-calls
taskset -c 0 $norandom "$bin" record -q -e "uprobe:$UP:work,uprobe:$UP:leaf" -c 1 -o "$work/up.rec" -- "$UP" 300 >/dev/null 2>&1
for s in symbol line; do
	run report-uprobe-$s.txt "$bin" report -i "$work/up.rec" --sort $s
	run report-uprobe-$s.json "$bin" report -i "$work/up.rec" --sort $s --json
done
run report-uprobe-annotate.txt "$bin" report -i "$work/up.rec" --annotate work
run report-uprobe-script.txt sh -c "\"$bin\" report -i \"$work/up.rec\" --format perf-script | head -6"

# regions: the seeds' array walk, exact page faults per region (its own output, which
# prints times, is not kept)
regions_norm() {
	norm | sed -E 's/TSC [0-9]+ Hz/TSC <M> Hz/; s/TSC <M> Hz from [a-z0-9+-]+;/TSC <M> Hz from <S>;/' | awk -F, -v OFS=, '
	# the table: time columns of each region row; the CSV: time and tick rows
	/^  region +calls +time ns/ { table = 1; gsub(/ +/, " "); print; next }
	table && NF && $0 ~ /^  / { n = split($0, f, " +"); line = "  " f[2] " " f[3]
		for (i = 4; i <= n; i++) line = line " " (i <= 6 ? "<M>" : f[i]); print line; next }
	$2 == "time_ns" || $2 == "ticks" { for (i = 5; i <= 10; i++) $i = "<M>"; print; next }
	{ print }'
}
for f in txt json csv; do
	run regions.$f env TACHO_EVENTS=page-faults TACHO_OUTPUT="$work/regions.$f" \
		$norandom sh -c "\"$build/examples/array-walk\" >/dev/null"
	regions_norm <"$work/regions.$f" >>"$out/regions.$f"
done

if [ "$machine" = --machine ]; then
	run m-cpu.txt "$bin" cpu
	run m-cpu.json "$bin" cpu --json
	run m-doctor.txt "$bin" doctor --no-clocks
	run m-doctor.json "$bin" doctor --json --no-clocks
	run m-list.txt "$bin" list
	run m-list.json "$bin" list --json
fi
exit 0
