#!/bin/sh
# demo.sh - the README's first command: what tacho is for, on this machine, with a
# bundled workload (examples/wc.c, a word count in the spirit of WC 5.40 from seed 000).
#
# It shows, in order: what the processor is, what this machine lets tacho measure,
# counting a program over repeated runs with statistics, and sampling its hot spots
# down to the source line.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
t=$b/tacho
wc=$b/examples/wc
rec=$(mktemp /tmp/tacho-demo.XXXXXX)
trap 'rm -f "$rec"' EXIT

step() {
	echo
	echo "================================================================================"
	echo "\$ tacho $*"
	echo
}

step cpu
"$t" cpu

step doctor
"$t" doctor

step stat -r 5 -- "$wc" --generate 8000000
"$t" stat -r 5 -- "$wc" --generate 8000000

step record -o "$rec" -- "$wc" --generate 30000000
"$t" record -o "$rec" -- "$wc" --generate 30000000

step report -i "$rec" --sort line
"$t" report -i "$rec" --sort line | head -15

echo
echo "More: 'tacho help', and one page per command in docs/."
