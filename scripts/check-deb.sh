#!/bin/bash
# check-deb.sh - the Debian packages build, pass lintian and work: copies the source
# (the files git tracks or would track, so uncommitted work counts) to a temporary
# folder, runs `dpkg-buildpackage -b -us -uc` there (debian/rules: the project's
# Makefile with Debian's paths and flags), runs lintian on the result (no error may be
# left; warnings are printed), unpacks the four .debs into a scratch root (dpkg -x:
# nothing touches the machine's dpkg database) and from there runs `tacho stat -- true`,
# builds examples/cpu-info.c against libtacho-dev with pkg-config and runs it, and runs
# tacho.stat from python3-tacho.
#
#   scripts/check-deb.sh [OUTDIR]   (keeps the .debs in OUTDIR when given)
#
# `make deb` runs it (docs/packaging.md); it takes a few minutes, most of it the build.
set -eu
cd "$(dirname "$0")/.."
out=${1:-}
fail() { echo "check-deb: FAILED: $*" >&2; exit 1; }
step() { echo "check-deb: $*"; }
for t in dpkg-buildpackage dh lintian pkg-config; do
	command -v $t >/dev/null || fail "$t is missing (scripts/deps.sh test installs it)"
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tacho-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src=$tmp/tacho
mkdir -p "$src"
git ls-files -co --exclude-standard -z | xargs -0 tar -cf - | tar -xf - -C "$src"

version=$(sed -n '1s/^tacho (\([^)]*\)).*/\1/p' debian/changelog)
upstream=$(sed -n 's/^#define TACHO_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' \
	include/tacho/errors.h | paste -sd.)
[ "${version%%-*}" = "$upstream" ] || fail "debian/changelog says $version, tacho.h $upstream"

step "dpkg-buildpackage -b -us -uc (log: $tmp/build.log while it runs)"
unset MAKEFLAGS MFLAGS MAKELEVEL
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" \
	dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1 \
	|| { tail -40 "$tmp/build.log" >&2; fail "dpkg-buildpackage"; }
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debs=()
for p in tacho libtacho0 libtacho-dev python3-tacho; do
	a=$arch
	[ $p = python3-tacho ] && a=all
	d=$tmp/${p}_${version}_$a.deb
	[ -e "$d" ] || fail "$d was not built"
	debs+=("$d")
done
step "built: $(cd "$tmp" && ls *.deb | xargs)"

step "lintian"
lintian --tag-display-limit 0 "$tmp"/tacho_${version}_$arch.changes >"$tmp/lintian.log" 2>&1 || true
sed 's/^/    /' "$tmp/lintian.log"
if grep -q '^E: ' "$tmp/lintian.log"; then
	fail "lintian reports errors"
fi
step "lintian: $(grep -c '^E: ' "$tmp/lintian.log" || true) errors, $(grep -c '^W: ' "$tmp/lintian.log" || true) warnings"

root=$tmp/root
for d in "${debs[@]}"; do dpkg -x "$d" "$root"; done
for f in usr/bin/tacho usr/lib/$ma/libtacho.so.0 usr/lib/$ma/libtacho.so usr/include/tacho.h \
	usr/lib/$ma/pkgconfig/tacho.pc usr/share/man/man1/tacho-stat.1.gz \
	usr/share/bash-completion/completions/tacho usr/share/zsh/vendor-completions/_tacho \
	usr/lib/python3/dist-packages/tacho/__init__.py; do
	[ -e "$root/$f" ] || fail "/$f is in no package"
done
export LD_LIBRARY_PATH=$root/usr/lib/$ma
step "the packaged tacho stat -- true"
"$root/usr/bin/tacho" stat -e task-clock,page-faults -- true >"$tmp/stat.out" 2>&1 \
	|| { cat "$tmp/stat.out" >&2; fail "tacho stat -- true"; }
grep -q page-faults "$tmp/stat.out" || fail "tacho stat printed no page-faults: $(cat "$tmp/stat.out")"

step "cc \$(pkg-config --cflags --libs tacho) examples/cpu-info.c against libtacho-dev"
export PKG_CONFIG_PATH=$root/usr/lib/$ma/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
${CC:-cc} -std=gnu11 $(pkg-config --cflags tacho) -o "$tmp/cpu-info" examples/cpu-info.c \
	$(pkg-config --libs tacho) || fail "building cpu-info against libtacho-dev"
ldd "$tmp/cpu-info" | grep -q "libtacho.so.0 => $root/usr/lib/$ma/libtacho.so.0" \
	|| fail "cpu-info does not load the packaged libtacho.so.0"
"$tmp/cpu-info" >/dev/null || fail "cpu-info built against libtacho-dev failed"
step "the packaged Python binding: tacho.stat([\"true\"], events=[\"page-faults\"])"
py=$(cd "$tmp" && PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -c \
	'import tacho; d = tacho.stat(["true"], events=["page-faults"]); print(tacho.__file__, d["events"][0]["status"])') \
	|| fail "the packaged binding: $py"
case $py in "$root"/*" counted") ;; *) fail "the packaged binding says '$py'" ;; esac
if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "${debs[@]}" "$out"/
	step "the .debs are in $out"
fi
step "ok"
