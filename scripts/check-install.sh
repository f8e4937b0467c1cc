#!/bin/bash
# check-install.sh - `make install` works for a program outside the project: installs
# BUILD's library, header, binary and tacho.pc under a temporary DESTDIR and PREFIX,
# then builds examples/cpu-info.c with what pkg-config says, linked statically and
# dynamically, and runs both (and the installed tacho); and builds it once more against
# the build tree itself through tacho-uninstalled.pc. BUILD is only read: `-o all`
# keeps make from rebuilding anything there.
#
#   scripts/check-install.sh [BUILD]      (default build; built already)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=/opt/tacho-check
for f in "$build/libtacho.a" "$build/libtacho.so" "$build/tacho"; do
	[ -e "$f" ] || { echo "check-install: $f is missing: build first (make BUILD=$build)" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tacho-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

step() { echo "check-install: $*"; }
fail() { echo "check-install: FAILED: $*" >&2; exit 1; }

unset MAKEFLAGS MFLAGS MAKELEVEL   # when run from inside a make: a plain, serial make
step "make install BUILD=$build PREFIX=$prefix DESTDIR=$root"
make -s --no-print-directory -o all BUILD="$build" PREFIX="$prefix" DESTDIR="$root" install \
	|| fail "make install"
for f in lib/libtacho.a lib/libtacho.so lib/libtacho.so.0 include/tacho.h include/tacho/errors.h include/tacho/report.h bin/tacho \
	 lib/pkgconfig/tacho.pc; do
	[ -e "$root$prefix/$f" ] || fail "$prefix/$f was not installed"
done
grep -qx "prefix=$prefix" "$root$prefix/lib/pkgconfig/tacho.pc" \
	|| fail "tacho.pc does not carry the install prefix $prefix"
grep -qx 'libdir=${prefix}/lib' "$root$prefix/lib/pkgconfig/tacho.pc" \
	|| fail "tacho.pc's libdir is not \${prefix}/lib: $(grep ^libdir= "$root$prefix/lib/pkgconfig/tacho.pc")"
grep -qx 'includedir=${prefix}/include' "$root$prefix/lib/pkgconfig/tacho.pc" \
	|| fail "tacho.pc's includedir is not \${prefix}/include"

# pkg-config reads the installed tacho.pc; the sysroot puts DESTDIR before its paths
export PKG_CONFIG_PATH=$root$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
cflags=$(pkg-config --cflags tacho | xargs) || fail "pkg-config --cflags tacho"
libs=$(pkg-config --libs tacho) || fail "pkg-config --libs tacho"
private=$(pkg-config --libs-only-l --static tacho | sed 's/-ltacho//') \
	|| fail "pkg-config --static --libs tacho"
# (Requires.private's modules add their own Cflags after tacho's, as pkg-config says)
[ "${cflags%% *}" = "-I$root$prefix/include" ] || fail "Cflags is '$cflags'"

# a sanitized build tree's library needs the sanitizers' runtime in the program too
san=
if readelf -d "$build/libtacho.so" 2>/dev/null | grep -q 'libasan'; then
	san="-fsanitize=address,undefined"
fi
cc=${CC:-cc}

# Only the installed header: the source tree's include/ is not on the path.
step "cc \$(pkg-config --cflags --libs tacho) examples/cpu-info.c (shared)"
$cc -std=gnu11 $san $cflags -o "$tmp/cpu-info-shared" examples/cpu-info.c $libs \
	|| fail "linking cpu-info against the installed shared library"
ldd_out=$(LD_LIBRARY_PATH=$root$prefix/lib ldd "$tmp/cpu-info-shared")
grep -q "libtacho.so.0 => $root$prefix/lib/libtacho.so.0" <<<"$ldd_out" \
	|| fail "cpu-info does not load the installed libtacho.so.0: $ldd_out"
out=$(LD_LIBRARY_PATH=$root$prefix/lib "$tmp/cpu-info-shared") || fail "cpu-info (shared) failed"
grep -q . <<<"$out" || fail "cpu-info (shared) printed nothing"

step "cc examples/cpu-info.c libtacho.a \$(pkg-config --static --libs-only-l tacho) (static)"
$cc -std=gnu11 $san $cflags -o "$tmp/cpu-info-static" examples/cpu-info.c \
	"$root$prefix/lib/libtacho.a" $private \
	|| fail "linking cpu-info against the installed static library"
if ldd "$tmp/cpu-info-static" | grep -q libtacho; then
	fail "cpu-info-static still loads libtacho.so"
fi
out2=$("$tmp/cpu-info-static") || fail "cpu-info (static) failed"
[ "$out" = "$out2" ] || fail "cpu-info prints differently linked statically and dynamically"

# From the build tree, not installed: pkg-config finds tacho-uninstalled.pc on the path
# and prefers it; the program runs without LD_LIBRARY_PATH (the .pc gives an rpath).
abs_build=$(cd "$build" && pwd)
[ -e "$build/tacho-uninstalled.pc" ] || fail "$build/tacho-uninstalled.pc is missing"
step "cc \$(PKG_CONFIG_PATH=$build pkg-config --cflags --libs tacho) examples/cpu-info.c"
ucflags=$(PKG_CONFIG_PATH=$abs_build PKG_CONFIG_SYSROOT_DIR= pkg-config --cflags tacho | xargs) \
	|| fail "pkg-config --cflags tacho from the build tree"
ulibs=$(PKG_CONFIG_PATH=$abs_build PKG_CONFIG_SYSROOT_DIR= pkg-config --libs tacho) \
	|| fail "pkg-config --libs tacho from the build tree"
[ "${ucflags%% *}" = "-I$PWD/include" ] || fail "uninstalled Cflags is '$ucflags'"
$cc -std=gnu11 $san $ucflags -o "$tmp/cpu-info-uninst" examples/cpu-info.c $ulibs \
	|| fail "linking cpu-info against the build tree's library"
ldd_out=$(env -u LD_LIBRARY_PATH ldd "$tmp/cpu-info-uninst")
grep -q "libtacho.so.0 => $abs_build/libtacho.so.0" <<<"$ldd_out" \
	|| fail "cpu-info does not load the build tree's libtacho.so.0: $ldd_out"
out3=$(env -u LD_LIBRARY_PATH "$tmp/cpu-info-uninst") || fail "cpu-info (uninstalled) failed"
[ "$out" = "$out3" ] || fail "cpu-info prints differently against the build tree"

step "the installed tacho --version"
v=$("$root$prefix/bin/tacho" --version) || fail "tacho --version"
[ "$v" = "tacho $(pkg-config --modversion tacho)" ] || fail "'$v' is not tacho.pc's version"
step "ok"
