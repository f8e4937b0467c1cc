#!/bin/sh
# vendor-uplot.sh - fetch the pinned uPlot (the charts of tacho serve's page) with npm,
# check the tarball's sha256, and copy its minified script, style sheet and licence into
# third_party/uplot/, from where the build embeds them in tacho (cli/serve/page.c).
#
#   scripts/vendor-uplot.sh            (needs npm and network; run when the pin changes)
#
# To move to another version: change VERSION and SHA256 (the sha256 of the tarball that
# `npm pack uplot@VERSION` downloads), run this, look at the diff, rerun the serve tests.
set -eu
VERSION=1.6.32
SHA256=4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d
cd "$(dirname "$0")/.."
out=third_party/uplot
command -v npm >/dev/null || { echo "vendor-uplot.sh: npm is missing (apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$VERSION" >/dev/null)
tgz=$tmp/uplot-$VERSION.tgz
[ -f "$tgz" ] || { echo "vendor-uplot.sh: npm pack gave no $tgz" >&2; exit 1; }
got=$(sha256sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
	echo "vendor-uplot.sh: uplot-$VERSION.tgz has sha256 $got, expected $SHA256" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$tmp"
mkdir -p "$out"
cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" \
	"$tmp/package/LICENSE" "$out/"
printf 'uplot %s from the npm registry, tarball sha256 %s\n' "$VERSION" "$SHA256" >"$out/VERSION"
(cd "$out" && sha256sum uPlot.iife.min.js uPlot.min.css LICENSE >>VERSION)
echo "vendor-uplot.sh: $out has uplot $VERSION"
