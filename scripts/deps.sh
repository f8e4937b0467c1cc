#!/bin/sh
# deps.sh - install the Debian packages tacho needs, or say exactly which are missing.
#
#   scripts/deps.sh build   what building libtacho and tacho needs
#   scripts/deps.sh test    that, plus the test framework, the fuzzing toolchain and
#                           the simulators that `tacho stat --sim` runs (valgrind, llvm-mca)
#   scripts/deps.sh bench   that, plus the peer tools the benchmarks compare against
#
# On Debian as root, missing packages are installed with apt-get. Anywhere else the
# script names the packages and stops: it never guesses another package manager.
set -eu

what=${1:-build}

build="gcc make pkg-config libc6-dev linux-libc-dev libpfm4-dev libdw-dev libelf-dev libncurses-dev libmicrohttpd-dev libcapstone-dev zlib1g-dev libtraceevent-dev libzstd-dev"
test="$build libcmocka-dev clang libclang-rt-14-dev xz-utils cpuid libxml2-utils chromium valgrind llvm tmux prometheus prometheus-pushgateway victoria-metrics aha golang-go strace systemtap-sdt-dev linux-perf libdebuginfod1 libc6-dbg man-db groff-base mandoc zsh dpkg-dev debhelper lintian python3 python3-pytest python3-yaml"
bench="$test libpapi-dev gzip sqlite3 likwid time procps curl"
# libzstd-dev: zstd.h for report -i of perf record -z's compressed perf.data
# (lib/report/perfdata-zstd.c loads libzstd.so.1 at the first compressed record)
# libncurses-dev: tacho top's screen; libmicrohttpd-dev: tacho serve (docs/serve.md says why)
# systemtap-sdt-dev: sys/sdt.h for the SDT probes of tests/progs/sdt-probes.c
# linux-perf: the tests read perf.data files made by perf record (report -i perf.data)
# man-db, groff-base, mandoc, zsh: test-cli-docs renders and lints the generated manual
# pages, finds them with man -w and parses the zsh completion
# python3, python3-pytest: test-python runs the Python binding's pytest tests (python/)
# python3-yaml: test-fleet-configs parses docs/fleet/parca.yaml (Parca is not in Debian)
# dpkg-dev, debhelper, lintian: make deb builds and checks the Debian packages (debian/)
# libc6-dbg: the C library's and ld.so's full symbol tables (test-symbols: ld.so's labels)
# tmux, prometheus (with promtool) and chromium: the live commands' tests drive the real
# programs; aha: scripts/docs-shots.sh turns tmux's panes into the docs' pictures
# prometheus-pushgateway: test-cmd-push pushes stat's counts to a real Pushgateway;
# victoria-metrics: test-cmd-serve has it scrape serve's /metrics too
# procps (top) and curl: bench/live.sh

case $what in
build) want=$build ;;
test)  want=$test ;;
bench) want=$bench ;;
*) echo "deps.sh: unknown set '$what' (build, test or bench)" >&2; exit 2 ;;
esac

# The exact tracepoint tests (syscalls:sys_enter_write counts) need tracefs. A fresh
# machine may not have it mounted; as root, mount it where the kernel expects it.
mount_tracefs() {
	[ "$what" = build ] && return 0
	[ -d /sys/kernel/tracing ] || return 0
	[ -e /sys/kernel/tracing/events ] && return 0
	if [ "$(id -u)" = 0 ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			echo "deps.sh: could not mount tracefs on /sys/kernel/tracing; tracepoint tests will skip" >&2
	else
		echo "deps.sh: tracefs is not mounted; as root: mount -t tracefs nodev /sys/kernel/tracing" >&2
	fi
}

missing=
for p in $want; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && { mount_tracefs; exit 0; }

if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: this is not Debian; install the equivalents of these Debian 12 packages:" >&2
	echo "   $missing" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages and not root; run as root:" >&2
	echo "   apt-get install -y$missing" >&2
	exit 1
fi

echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# An old or absent package list is the usual reason a fresh machine finds nothing.
apt-get update -qq >&2 || { echo "deps.sh: apt-get update failed" >&2; exit 1; }
if ! apt-get install -y -qq --no-install-recommends $missing >/tmp/tacho-deps.log 2>&1; then
	tail -20 /tmp/tacho-deps.log >&2
	echo "deps.sh: apt-get install failed for:$missing (log: /tmp/tacho-deps.log)" >&2
	exit 1
fi
mount_tracefs
