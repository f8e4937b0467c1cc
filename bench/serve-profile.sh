#!/bin/sh
# serve-profile.sh - the cost of tacho serve --profile beside perf record at the same
# rate, in one run (docs/performance.md, "Issue 29"): N processes, BUSY of them spinning
# and the rest mostly asleep (a shell that wakes every 10 s to run sleep(1), so the
# machine holds N processes whose maps the sampler meets and keeps), while, started
# together, over the same SECS seconds,
#   - tacho serve --profile --view machine (the always-on sampler at 19 Hz per CPU,
#     cpu-clock here, kernel and user call chains, a 60 s window) and
#   - perf record -a -F 19 -g into a file (the same rate, the same chains),
# sample the whole machine. Said: the CPU time (utime + stime of /proc/PID/stat) of each
# process, tacho's sampler thread alone (tacho_serve_profile_cpu_seconds_total), as a
# share of one CPU; tacho's peak RSS (VmHWM) and the memory its window holds
# (tacho_serve_profile_bytes) against its cap; perf's file size; the samples each took.
#
#   bench/serve-profile.sh [SECS [N [BUILD [BUSY]]]]
# (default 60 s, 4 processes, build, all N busy). A fleet-sized run that does not swamp
# a small machine: bench/serve-profile.sh 600 500 build 2 (2 spinning, 498 mostly idle).
# Needs perf (linux-perf) and curl: `scripts/deps.sh bench`. Run as root (or with
# perf_event_paranoid -1) for system-wide sampling.
set -eu
secs=${1:-60}
n=${2:-4}
b=${3:-build}
busy=${4:-$n}
[ "$busy" -le "$n" ] || { echo "serve-profile.sh: BUSY ($busy) is more than N ($n)" >&2; exit 1; }
cd "$(dirname "$0")/.."
tacho=$b/tacho
[ -x "$tacho" ] || { echo "serve-profile.sh: $tacho is missing (make BUILD=$b)" >&2; exit 1; }
for c in perf curl; do
	command -v $c >/dev/null || { echo "serve-profile.sh: $c is missing (scripts/deps.sh bench)" >&2; exit 1; }
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
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tacho: $("$tacho" --version); perf: $(perf --version)"
echo "$n processes ($busy busy, $((n - busy)) mostly idle), $secs s"

i=0
while [ "$i" -lt "$n" ]; do
	if [ "$i" -lt "$busy" ]; then
		sh -c 'while :; do :; done' &
	else
		sh -c 'while :; do sleep 10; done' &
	fi
	pids="$pids $!"
	i=$((i + 1))
done

# a free port: the kernel's pick for a socket bound to port 0 would need a helper;
# take one from the ephemeral range's top and check nothing answers there
port=$((40000 + $$ % 20000))
"$tacho" serve --listen "127.0.0.1:$port" --view machine --profile 2> "$tmp/serve.err" &
tp=$!
pids="$pids $tp"
perf record -a -F 19 -g -o "$tmp/perf.data" 2> "$tmp/perf.err" > /dev/null &
pp=$!
pids="$pids $pp"
# both started: wait until tacho answers, then begin the clock for both
j=0
until curl -sf "http://127.0.0.1:$port/metrics" > /dev/null; do
	j=$((j + 1))
	[ "$j" -lt 100 ] || { echo "tacho serve does not answer:" >&2; cat "$tmp/serve.err" >&2; exit 1; }
	sleep 0.1
done
t0=$(ticks "$tp")
p0=$(ticks "$pp")
s0=$(metric tacho_serve_profile_cpu_seconds_total)
sleep "$secs"
t1=$(ticks "$tp")
p1=$(ticks "$pp")
s1=$(metric tacho_serve_profile_cpu_seconds_total)
bytes=$(metric tacho_serve_profile_bytes)
samples=$(metric tacho_serve_profile_samples_total)
stacks=$(metric tacho_serve_profile_stacks)
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$tp/status")
# perf stops with the clock (its exit, writing build-ids, is not in its figure); tacho
# then answers a profile of the whole window, which symbolizes every binary sampled
kill -INT "$pp"
wait "$pp" 2>/dev/null || true
# (?seconds= takes at most 300: a longer run asks for the last 300 s)
psecs=$secs
[ "$psecs" -le 300 ] || psecs=300
curl -s -o "$tmp/profile.pb.gz" -w "a ?seconds=$psecs profile after: %{http_code}, %{size_download} bytes in %{time_total} s\n" \
	"http://127.0.0.1:$port/debug/pprof/profile?seconds=$psecs"
hwm2=$(awk '/^VmHWM/ { print $2 }' "/proc/$tp/status")
kill -INT "$tp"
wait "$tp" 2>/dev/null || true
# one line a sample: the period alone, no chain
psamples=$(perf script -i "$tmp/perf.data" -F period 2> "$tmp/script.err" | wc -l)
[ "$psamples" -gt 0 ] || { echo "perf script read no sample:" >&2; cat "$tmp/script.err" >&2; }

echo
awk -v t0="$t0" -v t1="$t1" -v p0="$p0" -v p1="$p1" -v s0="$s0" -v s1="$s1" -v hz="$hz" \
    -v secs="$secs" -v bytes="$bytes" -v hwm="$hwm" -v hwm2="$hwm2" -v samples="$samples" -v stacks="$stacks" \
    -v psize="$(stat -c %s "$tmp/perf.data")" -v psamples="$psamples" 'BEGIN {
	t = (t1 - t0) / hz; p = (p1 - p0) / hz; s = s1 - s0
	printf "%-46s %8s %12s\n", "", "CPU s", "% of one CPU"
	printf "%-46s %8.3f %11.3f %%\n", "tacho serve --profile (whole process)", t, 100 * t / secs
	printf "%-46s %8.3f %11.3f %%\n", "  its sampler thread", s, 100 * s / secs
	printf "%-46s %8.3f %11.3f %%\n", "perf record -a -F 19 -g", p, 100 * p / secs
	printf "\ntacho: peak RSS %.1f MB sampling, %.1f MB once it answered the profile; window holds %.2f MB of its 64 MiB cap (%d stacks, %d samples taken)\n",
		hwm / 1024, hwm2 / 1024, bytes / 1e6, stacks, samples
	printf "perf: %.2f MB of perf.data, %s samples\n", psize / 1e6, psamples
}'
