#!/bin/sh
# record-size.sh - the size of tacho's record file against zstd -19 of the same file:
# how near its entropy the format is (issue 32, "files near their entropy"). Each
# workload is recorded three times: with call chains written in full
# (TACHO_REC_INLINE_CHAINS=1: what format version 3 wrote), with chains written once and
# referred to (TACHO_REC_FORMAT=4: format version 4), and as paths in a tree of
# (parent, frame) nodes with the user stacks compressed by zstd (format version 5, the
# default):
#   1. tacho record -g of gzip compressing 30 MB of base64 text;
#   2. tacho record -g of python3 running a loop (LOOPS rounds, default 40);
#   3. tacho record --call-graph dwarf of gzip (8 MB), whose stack copies dominate.
# Prints, per file: bytes, samples, bytes a sample, zstd -19 bytes, and the ratio.
# usage: sh bench/record-size.sh [BUILD] (default build). Results: docs/performance.md,
# "Issue 32: files near their entropy".
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$(pwd)/$b/tacho
[ -x "$tacho" ] || { echo "record-size.sh: $tacho is missing (make BUILD=$b)" >&2; exit 1; }
for c in zstd gzip python3 base64; do
	command -v $c >/dev/null || { echo "record-size.sh: $c is missing" >&2; exit 1; }
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
head -c 22500000 /dev/urandom | base64 > "$t/in.txt"      # about 30 MB
head -c 8000000 "$t/in.txt" > "$t/small.txt"
cat > "$t/loop.py" <<PY
def f(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
def g():
    return sum(f(2000) for _ in range(300))
for _ in range(${LOOPS:-40}):
    g()
PY

# one: NAME MODE (full|refs|tree) RECORD-ARGS... -- PROGRAM...
one() {
	name=$1 mode=$2
	shift 2
	f="$t/$name-$mode.rec"
	case $mode in
	full) TACHO_REC_INLINE_CHAINS=1 "$tacho" record -q -o "$f" "$@" >/dev/null ;;
	refs) TACHO_REC_FORMAT=4 "$tacho" record -q -o "$f" "$@" >/dev/null ;;
	*) "$tacho" record -q -o "$f" "$@" >/dev/null ;;
	esac
	size=$(stat -c %s "$f")
	zsize=$(zstd -19 -q -c "$f" | wc -c)
	n=$("$tacho" report -i "$f" --format perf-script 2>/dev/null | grep -c '^[^ 	]' || true)
	awk -v n="$name" -v m="$mode" -v s="$size" -v z="$zsize" -v c="$n" 'BEGIN {
		printf "%-12s %-5s %10d bytes %7d samples %8.1f B/sample  zstd -19 %9d  %5.2fx\n",
		       n, m, s, c, c ? s / c : 0, z, s / z }'
}

for mode in ${MODES:-full refs tree}; do
	one gzip-g "$mode" -g -- gzip -c "$t/in.txt"
	one python3-g "$mode" -g -- python3 "$t/loop.py"
	one gzip-dwarf "$mode" --call-graph dwarf -- gzip -c "$t/small.txt"
done
