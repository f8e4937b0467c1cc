#!/bin/sh
# live.sh - the cost of live monitoring, side by side in one run (docs/performance/live.md):
#   1. the monitor's own CPU at 1 Hz over every process of the machine: tacho top -b
#      (-k large enough for every process, default software events), perf top
#      (cpu-clock: this machine has no PMU) and procps top, started together, their
#      CPU time (utime + stime of /proc/PID/stat) over the same SECS seconds;
#   2. the latency of a /metrics scrape with 100 events (the 100 first syscalls
#      tracepoints): tacho serve in the machine view (one counter per event and CPU)
#      and in the CPU view (a series per CPU), N scrapes with curl one after another,
#      median and 99th percentile, as curl saw them and as tacho timed them
#      (tacho_scrape_duration_seconds); the same for / (the page) as a floor.
#
#   bench/live.sh [BUILD]        (BUILD: the build folder, default build)
# Needs perf (linux-perf), procps' top and curl: `scripts/deps.sh bench`. Run as root for
# perf top over the whole machine and tracefs. SECS (default 30) and N (default 200)
# set the effort.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
secs=${SECS:-30}
n=${N:-200}
[ -x "$tacho" ] || { echo "live.sh: $tacho is missing (make BUILD=$b)" >&2; exit 1; }
for c in perf top curl; do
	command -v $c >/dev/null || { echo "live.sh: $c is missing (scripts/deps.sh bench)" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

nproc_now=$(ls -d /proc/[0-9]* | wc -l)
echo "machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $nproc_now processes"
echo "tacho: $("$tacho" --version); perf: $(perf --version); procps top $(dpkg-query -W -f='${Version}' procps 2>/dev/null)"
echo

echo "1. the monitor's own CPU at 1 Hz over every process, $secs s, all three at once"
# every process followed: more descriptors than the default 1024 (events x threads)
ulimit -n "$(ulimit -H -n)"
"$tacho" top -b -d 1 -k 100000 >"$tmp/top.txt" 2>"$tmp/top.err" & t=$!
pids="$pids $t"
perf top --stdio -e cpu-clock -d 1 >"$tmp/perf.txt" 2>&1 </dev/null & p=$!
pids="$pids $p"
top -b -d 1 -n $((secs + 10)) >"$tmp/procps.txt" 2>&1 & q=$!
pids="$pids $q"
sleep 3                                  # past their start-up
t0=$(ticks $t) p0=$(ticks $p) q0=$(ticks $q) w0=$(date +%s.%N)
sleep "$secs"
t1=$(ticks $t) p1=$(ticks $p) q1=$(ticks $q) w1=$(date +%s.%N)
kill $t $p $q 2>/dev/null || true
wait $t $p $q 2>/dev/null || true
rows=$(awk '/ rows/ { r = $0 } END { print r }' "$tmp/top.txt" | head -c 200)
awk -v hz="$hz" -v w0="$w0" -v w1="$w1" -v t="$((t1 - t0))" -v p="$((p1 - p0))" \
	-v q="$((q1 - q0))" 'BEGIN {
	s = w1 - w0
	printf "   %-34s %6.2f %% of a CPU (%d ticks in %.1f s)\n", "tacho top -b -d 1 -k 100000", 100 * t / hz / s, t, s
	printf "   %-34s %6.2f %% of a CPU (%d ticks)\n", "perf top --stdio -e cpu-clock -d 1", 100 * p / hz / s, p
	printf "   %-34s %6.2f %% of a CPU (%d ticks)\n", "top -b -d 1", 100 * q / hz / s, q
}'
echo "   tacho's last refresh: $(grep -m1 -o '[0-9]* rows[^)]*' "$tmp/top.txt" | tail -1)"
grep -h "not counted\|cannot" "$tmp/top.err" | head -3 | sed 's/^/   tacho says: /'
echo

echo "2. scrape latency with 100 events ($n scrapes one after another, curl)"
evs=$(ls /sys/kernel/tracing/events/syscalls | grep '^sys_enter_' | head -100 |
	sed 's/^/syscalls:/' | paste -sd,)
median_p99() {
	sort -n | awk '{ v[NR] = $1 } END { printf "median %.2f ms, p99 %.2f ms, max %.2f ms", 1000 * v[int((NR + 1) / 2)], 1000 * v[int(NR * 0.99)], 1000 * v[NR] }'
}
port=$((20000 + $$ % 20000))
for view in machine cpu; do
	port=$((port + 1))
	"$tacho" serve --listen 127.0.0.1:$port -d 1 --view $view -e "$evs" \
		>"$tmp/serve.log" 2>&1 & s=$!
	pids="$pids $s"
	for i in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$port/metrics" && break
		sleep 0.1
	done
	sleep 2
	size=$(curl -s "http://127.0.0.1:$port/metrics" | wc -c)
	series=$(curl -s "http://127.0.0.1:$port/metrics" | grep -c '^tacho_.*_total{' || true)
	# the client's time (curl, a process each: its start-up is in it) and tacho's own
	# (tacho_scrape_duration_seconds: making the previous answer, from the snapshot)
	: >"$tmp/client"
	: >"$tmp/server"
	for i in $(seq "$n"); do
		curl -s -o "$tmp/body" -w '%{time_total}\n' "http://127.0.0.1:$port/metrics" >>"$tmp/client"
		awk '$1 == "tacho_scrape_duration_seconds" { print $2 }' "$tmp/body" >>"$tmp/server"
	done
	median_p99 <"$tmp/client" >"$tmp/m"
	sed 1d "$tmp/server" | median_p99 >"$tmp/s"
	for i in $(seq "$n"); do
		curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/"
	done | median_p99 >"$tmp/p"
	echo "   --view $view: /metrics ($size bytes, $series event series): $(cat "$tmp/m")"
	echo "   --view $view: /metrics as tacho timed it: $(cat "$tmp/s")"
	echo "   --view $view: / (the page, a fixed text): $(cat "$tmp/p")"
	kill $s
	wait $s 2>/dev/null || true
done
