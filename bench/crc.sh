#!/bin/sh
# crc.sh - the record file's CRC-32 (lib/util/crc32.c) beside zlib's crc32 and the
# byte-at-a-time loop it replaced, on a 72-byte sample record, 4 KiB and 1 MiB; prints
# MB/s (median of 41 interleaved rounds) and the median (min-max) of per-round ratios of
# each to zlib's time (docs/performance.md, "CRC-32 of the record file").
#
#   bench/crc.sh [BUILD]        (make benches first; `make bench` runs every script)
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
bin=$(pwd)/$b/bench/bench-crc
[ -x "$bin" ] || { echo "crc.sh: $bin is not built (make BUILD=$b benches)" >&2; exit 1; }
"$bin" | awk -F '\t' '
	BEGIN { printf "%8s  %-26s %9s  %s\n", "bytes", "variant", "MB/s", "time / zlib: median (min-max)" }
	{ printf "%8s  %-26s %9.0f  %.2fx (%.2f-%.2f)\n", $1, $2, $3, $4, $5, $6 }'
