#!/bin/sh
# libcost.sh - what each shared library tacho links costs every command at start-up:
# the CPU time (user + system, ms) of one exec of an empty main() linked with it, beside
# the empty program alone and with all of tacho's libraries (the shell's fork included
# in each figure alike). RUNS (default 300) sets the execs per program.
# usage: sh bench/libcost.sh. Results: docs/performance.md, "Issue 13" (tacho cpu).
set -eu
runs=${RUNS:-300}
command -v /usr/bin/time >/dev/null || { echo "libcost.sh: /usr/bin/time is missing (scripts/deps.sh bench)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$(dirname "$0")/.."
echo 'int main(void) { return 0; }' > "$tmp/nop.c"
all=$(pkg-config --libs libpfm libdw capstone zlib ncursesw libmicrohttpd 2>/dev/null ||
      echo "-lpfm -ldw -lelf -lcapstone -lz -lncursesw -lmicrohttpd")
cc -o "$tmp/none" "$tmp/nop.c"
cc -o "$tmp/all" "$tmp/nop.c" -Wl,--no-as-needed $all
set -- none all
for l in pfm dw capstone ncursesw microhttpd; do
	cc -o "$tmp/$l" "$tmp/nop.c" -Wl,--no-as-needed -l$l
	set -- "$@" "$l"
done
for p in "$@"; do
	/usr/bin/time -f "%U %S" sh -c "i=0; while [ \$i -lt $runs ]; do \"$tmp/$p\"; i=\$((i + 1)); done" \
		2>"$tmp/t"
	awk -v p="$p" -v n="$runs" '{ printf "%-12s %6.2f ms CPU per exec\n", p == "none" ? "(none)" : p == "all" ? "(all)" : "lib" p, ($1 + $2) * 1000 / n }' "$tmp/t"
done
