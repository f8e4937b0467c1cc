#!/bin/sh
# check-layers.sh - the symbol-level layering check (docs/architecture.md, "Layers").
#
#   scripts/check-layers.sh [BUILD] [TABLE] [SRC]
#
# Reads the layer table (the ```layers block of TABLE, default docs/architecture.md) and
# the objects BUILD/lib/PART/*.o and BUILD/cli/*.o (default BUILD: build). Every global
# symbol an object uses but does not define is looked up among the symbols the other
# objects define; a use of another part that the table does not allow is printed as
#   layers: forbidden: CALLER_PART/FILE.o -> CALLEE_PART/FILE.o: SYMBOL
# and so is a use of a symbol a `!PATTERN` entry denies. A part without a row is an
# error too (add its row when adding a part).
#
# With SRC (the source tree), an object whose source file is gone (a file moved since
# the last build) is left out, and the includes are checked too: the ```areas block of
# TABLE says which part defines each public header (include/tacho/AREA.h), and every
#   #include "tacho/AREA.h"
# in SRC/lib/PART/ (and in include/tacho/AREA.h, for the part that defines AREA) must
# name an area of PART or of a part PART may use; one that does not is printed as
#   layers: forbidden include: lib/PART/FILE:LINE: "tacho/AREA.h": PART may not use OWNER
# and so is the umbrella "tacho.h" anywhere under lib/ (a file includes the areas it
# needs), and an area without a row. Exit 0 when every arrow is allowed, 1 when one is
# not, 2 for bad input.
set -u
build=${1:-build}
table=${2:-$(dirname "$0")/../docs/architecture.md}
src=${3:-}

[ -d "$build/lib" ] || { echo "layers: no objects under $build/lib (build first)" >&2; exit 2; }
[ -r "$table" ] || { echo "layers: cannot read the layer table $table" >&2; exit 2; }
command -v nm >/dev/null || { echo "layers: nm (binutils) is needed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The table: "PART USES..." lines between ```layers and ```, comments dropped.
awk '/^```layers/ { on = 1; next } /^```/ { on = 0 } on && !/^#/ && NF { print }' \
	"$table" >"$tmp/table"
[ -s "$tmp/table" ] || { echo "layers: $table has no \`\`\`layers block" >&2; exit 2; }

# Defined and undefined global symbols, one "PART/OBJ SYMBOL" line each.
: >"$tmp/def"
: >"$tmp/undef"
for o in "$build"/lib/*/*.o "$build"/cli/*.o; do
	[ -f "$o" ] || continue
	case $o in "$build"/cli/*) who=cli/$(basename "$o") ;;
	*) who=$(basename "$(dirname "$o")")/$(basename "$o") ;; esac
	case $who in cli/*) c=cli/${who#cli/} ;; *) c=lib/$who ;; esac
	[ -n "$src" ] && [ ! -f "$src/${c%.o}.c" ] && continue   # stale: its source moved
	nm -g --defined-only "$o" | awk -v w="$who" 'NF == 3 { print w, $3 }' >>"$tmp/def"
	nm -u "$o" | awk -v w="$who" '{ print w, $NF }' >>"$tmp/undef"
done

awk -v table="$tmp/table" -v defs="$tmp/def" '
BEGIN {
	bad = 0
	while ((getline line < table) > 0) {
		n = split(line, f, /[ \t]+/)
		part = f[1]
		known[part] = 1
		for (i = 2; i <= n; i++) {
			if (f[i] == "-") continue
			if (f[i] == "*") any[part] = 1
			else if (substr(f[i], 1, 1) == "!") deny[part] = deny[part] " " substr(f[i], 2)
			else allow[part, f[i]] = 1
		}
	}
	while ((getline line < defs) > 0) {
		split(line, f, " ")
		if (!(f[2] in where)) where[f[2]] = f[1]
		seen[part_of(f[1])] = 1
	}
	for (p in seen)
		if (!(p in known)) { print "layers: part \"" p "\" has no row in the table"; told[p] = 1; bad = 1 }
}
function part_of(w) { sub(/\/.*/, "", w); return w }
function glob_match(pat, s,   re) {
	re = pat
	gsub(/[.+^$(){}|\\]/, "\\\\&", re)
	gsub(/\*/, ".*", re)
	gsub(/\?/, ".", re)
	return s ~ ("^" re "$")
}
{
	caller = $1; sym = $2; cp = part_of(caller)
	if (!(cp in known)) {
		if (!(cp in told)) { print "layers: part \"" cp "\" has no row in the table"; told[cp] = 1 }
		bad = 1
		next
	}
	if (deny[cp] != "") {
		nd = split(deny[cp], d, " ")
		for (i = 1; i <= nd; i++)
			if (glob_match(d[i], sym)) {
				print "layers: forbidden: " caller " -> " (sym in where ? where[sym] : "?") ": " sym " (denied to " cp ")"
				bad = 1
			}
	}
	if (!(sym in where)) next          # libc, libpfm4, elfutils, ...
	callee = where[sym]; ep = part_of(callee)
	if (ep == cp || any[cp] || ((cp, ep) in allow)) next
	print "layers: forbidden: " caller " -> " callee ": " sym
	bad = 1
}
END { exit bad }
' "$tmp/undef"
rc=$?
[ $rc = 0 ] && echo "layers: every call between parts is allowed ($(wc -l <"$tmp/table") parts)"
[ -n "$src" ] || exit $rc

# The includes: "PART AREA..." lines of the ```areas block, then every #include of a
# public header under SRC/lib and in the area headers themselves (an area may build on
# the areas its part may use) as "FILE:LINE:HEADER".
awk '/^```areas/ { on = 1; next } /^```/ { on = 0 } on && !/^#/ && NF { print }' \
	"$table" >"$tmp/areas"
[ -s "$tmp/areas" ] || { echo "layers: $table has no \`\`\`areas block" >&2; exit 2; }
: >"$tmp/includes"
for f in "$src"/lib/*/*.c "$src"/lib/*/*.h "$src"/include/tacho/*.h; do
	[ -f "$f" ] || continue
	awk -v f="${f#"$src"/}" '/^[ \t]*#[ \t]*include[ \t]*"tacho[\/.]/ {
		h = $0; sub(/^[^"]*"/, "", h); sub(/".*/, "", h); print f ":" FNR ":" h }' \
		"$f" >>"$tmp/includes"
done
awk -v table="$tmp/table" -v areas="$tmp/areas" -F: '
BEGIN {
	bad = 0
	while ((getline line < table) > 0) {
		n = split(line, f, /[ \t]+/)
		for (i = 2; i <= n; i++) {
			if (f[i] == "*") any[f[1]] = 1
			else if (f[i] != "-" && substr(f[i], 1, 1) != "!") allow[f[1], f[i]] = 1
		}
	}
	while ((getline line < areas) > 0) {
		n = split(line, f, /[ \t]+/)
		for (i = 2; i <= n; i++) owner[f[i]] = f[1]
	}
}
{
	file = $1; line = $2; hdr = $3
	part = file; sub(/^lib\//, "", part); sub(/\/.*/, "", part)
	if (file ~ /^include\//) {        # an area header: its part is the one defining it
		self = file; sub(/^.*\//, "", self); sub(/\.h$/, "", self)
		if (!(self in owner)) {
			print "layers: " file ": area \"" self "\" has no row in the areas table"
			bad = 1
			next
		}
		part = owner[self]
	}
	if (hdr == "tacho.h") {
		print "layers: forbidden include: " file ":" line ": \"tacho.h\"" \
			" (the umbrella: include the areas the file needs)"
		bad = 1
		next
	}
	area = hdr; sub(/^tacho\//, "", area); sub(/\.h$/, "", area)
	if (!(area in owner)) {
		print "layers: " file ":" line ": \"" hdr "\": area \"" area "\"" \
			" has no row in the areas table"
		bad = 1
		next
	}
	def = owner[area]
	if (def == part || any[part] || ((part, def) in allow)) next
	print "layers: forbidden include: " file ":" line ": \"" hdr "\": " part \
		" may not use " def
	bad = 1
}
END { exit bad }
' "$tmp/includes"
irc=$?
[ $irc = 0 ] && echo "layers: every public header a part includes is allowed" \
	"($(wc -l <"$tmp/includes") includes)"
[ $rc = 0 ] && rc=$irc
exit $rc
