#!/bin/sh
# report-load.sh - tacho report against perf report on recordings of python3 running a
# loop with call chains (-g, cpu-clock every 25 us: 40 kHz) at about SIZES samples
# (default "4000 100000 1000000"), each tool's own recording; tacho also reads perf's.
# For each recording and input (tacho's file, perf.data): by symbol (perf report --stdio
# --sort sym --no-children -g none), --children (perf --children -g none) and the folded
# export (perf script alone: the stacks a perf user still has to fold, so perf's figure
# is a floor of what folding costs with perf), in ROUNDS (default 5) interleaved rounds
# of: the build BEFORE (optional, another build folder), this build, perf. Every run must
# exit 0 (else the script stops: no figures). Each run's CPU time (user + system) and
# peak RSS come from wait4(2); printed: the medians, and the median of the per-round CPU
# ratios to perf (min-max). The rounds run with the build-id cache warm (the kernel's
# symbols copied, the binaries' line and inline caches made, as after a first report);
# before them, "first report" is one run of this build's --children into an empty cache.
# usage: sh bench/report-load.sh [BUILD [BEFORE]] (default build, no before).
# Results: docs/performance.md, "Issue 32". Timings are medians on this machine only.
set -eu
b=${1:-build}
before=${2:-}
cd "$(dirname "$0")/.."
tacho=$(pwd)/$b/tacho
[ -z "$before" ] || before=$(cd "$before" && pwd)/tacho
rounds=${ROUNDS:-5}
sizes=${SIZES:-4000 100000 1000000}
for f in "$tacho" ${before:+"$before"}; do
	[ -x "$f" ] || { echo "report-load.sh: $f is missing" >&2; exit 1; }
done
# the interpreter itself: a pyenv shim first in PATH is a shell script that spends
# half a second of CPU before python3 starts (62k samples of bash for a 4k recording)
py=$(command -v /usr/bin/python3 || command -v python3)
for c in perf "$py"; do
	command -v $c >/dev/null || { echo "report-load.sh: $c is missing (scripts/deps.sh bench)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/tacho-bench-load.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"   # the kernel's symbols copied once, as after a first report
cat > "$tmp/loop.py" <<'PY'
import sys, time
end = float(sys.argv[1]) / 1000
d = {}
while time.process_time() < end:
    for i in range(1000):
        d[i % 97] = str(i) + "x"
PY
# ROUNDS interleaved rounds of each command line (separated by ";;"), their output to
# /dev/null: a line per command with its median CPU ms and peak RSS KiB, then the median
# ratio (min-max) of each to the last one
cat > "$tmp/rounds.py" <<'PY'
import os, sys, statistics
rounds, args = int(sys.argv[1]), sys.argv[2:]
cmds, cur = [], []
for a in args:
    if a == ";;":
        cmds.append(cur); cur = []
    else:
        cur.append(a)
cmds.append(cur)
cpu = [[] for _ in cmds]; rss = [[] for _ in cmds]
null = os.open(os.devnull, os.O_WRONLY)
for r in range(rounds):
    for i, c in enumerate(cmds):
        pid = os.fork()
        if pid == 0:
            os.dup2(null, 1); os.dup2(null, 2)
            os.execvp(c[0], c)
        _, st, ru = os.wait4(pid, 0)
        if st:
            sys.exit("report-load.sh: %s failed (wait status %d): no figures" % (" ".join(c), st))
        cpu[i].append((ru.ru_utime + ru.ru_stime) * 1e3); rss[i].append(ru.ru_maxrss)
for i, c in enumerate(cmds):
    rat = [a / b for a, b in zip(cpu[i], cpu[-1])]
    print("     %-8s CPU %9.1f ms  RSS %8d KiB  %.2fx perf (%.2f-%.2f)  RSS %.2fx" % (
        ["before", "after", "perf"][i - len(cmds) + 3], statistics.median(cpu[i]),
        statistics.median(rss[i]), statistics.median(rat), min(rat), max(rat),
        statistics.median(rss[i]) / statistics.median(rss[-1])))
PY
tacho_n() { "$tacho" report -i "$1" 2>/dev/null | head -1 | sed 's/^# \([0-9,]*\) samples.*/\1/' | tr -d ,; }
run() {   # WHAT INPUT PERF-COMMAND... : before, after, perf
	what=$1 in=$2
	shift 2
	case $what in
	symbol) opts="" ;;
	children) opts="--children" ;;
	folded) opts="--format folded" ;;
	esac
	echo "   $what, tacho reading $(basename "$in")"
	# shellcheck disable=SC2086
	python3 "$tmp/rounds.py" "$rounds" ${before:+"$before" report -i "$in" $opts ";;"} \
		"$tacho" report -i "$in" $opts ";;" "$@"
}
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds each"
for n in $sizes; do
	ms=$((n / 40))   # 40 samples a ms of CPU
	t="$tmp/t.rec"
	p="$tmp/p.data"
	rm -f "$t" "$p"
	"$tacho" record -q -g -e cpu-clock -c 25000 -o "$t" -- "$py" "$tmp/loop.py" $ms >/dev/null
	# --no-buildid: perf 6.1 aborts at util/build-id.c:1010 on Debian's python3 here
	perf record -q --no-buildid -g -e cpu-clock -c 25000 -o "$p" -- "$py" "$tmp/loop.py" $ms >/dev/null 2>&1
	echo "$n asked: tacho's file $(tacho_n "$t") samples ($(stat -c %s "$t") bytes), perf.data $(tacho_n "$p") ($(stat -c %s "$p") bytes); load $(cut -d' ' -f1 /proc/loadavg)"
	# the first report of these binaries: an empty cache, once (CPU ms, peak KiB)
	python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
    os.environ["XDG_CACHE_HOME"] = sys.argv[1]
    os.execv(sys.argv[2], sys.argv[2:])
_, st, ru = os.wait4(pid, 0)
if st:
    sys.exit("report-load.sh: the first report failed (wait status %d)" % st)
print("   first report, --children, empty cache: CPU %.1f ms, RSS %d KiB" %
      ((ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_maxrss))' "$tmp/cold-$n" "$tacho" report -i "$t" --children
	rm -rf "$tmp/cold-$n"
	for in in "$t" "$p"; do   # the kernel's symbols and the binaries' caches, once
		"$tacho" report -i "$in" --children >/dev/null 2>&1
	done
	for in in "$t" "$p"; do
		run symbol "$in" perf report -i "$p" --stdio --sort sym --no-children -g none
		run children "$in" perf report -i "$p" --stdio --sort sym --children -g none
		run folded "$in" perf script -i "$p"
	done
done
