#!/bin/sh
# demo.sh - the README's first command: show what tacho is for on this machine.
set -eu
b=${1:-build}
run() {
	echo
	echo "\$ tacho $*"
	"$b/tacho" "$@"
}
run cpu
