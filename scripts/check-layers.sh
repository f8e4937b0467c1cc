#!/bin/sh
# check-layers.sh - the symbol-level layering check (docs/architecture.md, "Layers").
#
#   scripts/check-layers.sh [BUILD] [TABLE] [SRC]
#
# Reads the layer table (the ```layers block of TABLE, default docs/architecture.md) and
# the objects BUILD/lib/PART/*.o, BUILD/cli/*.o and BUILD/cli/*/*.o (default BUILD:
# build). Every global symbol an object uses but does not define is looked up among the
# symbols the other objects define; a use of another part that the table does not allow
# is printed as
#   layers: forbidden: CALLER_PART/FILE.o -> CALLEE_PART/FILE.o: SYMBOL
# and so is a use of a symbol a `!PATTERN` entry denies. A part without a row is an
# error too (add its row when adding a part).
#
# With SRC (the source tree), the check sees the whole tree:
# - an object whose source file is gone (a file moved since the last build) is left out;
# - an arrow of the table that no call and no include uses is printed as
#     layers: unused: PART -> PART (nothing uses it: remove it from the table)
#   so that the table stays the arrows that are, and a new call along one is caught;
# - the includes are checked: the ```areas block of TABLE says which part defines each
#   public header (include/tacho/AREA.h), and every
#     #include "tacho/AREA.h"
#   in SRC/lib/PART/ (and in include/tacho/AREA.h, for the part that defines AREA) must
#   name an area of PART or of a part PART may use; one that does not is printed as
#     layers: forbidden include: lib/PART/FILE:LINE: "tacho/AREA.h": PART may not use OWNER
#   and so is the umbrella "tacho.h" anywhere under lib/ (a file includes the areas it
#   needs), and an area without a row;
# - no file of SRC/cli/ includes a library-private header (NAME-int.h: what only the
#   part's own files may see), but for the known exceptions below:
#     layers: forbidden include: cli/FILE:LINE: "PART/NAME-int.h": private to the library
#   An exception whose include is gone is printed too, so that the list only shrinks
#   (it is empty: watch's controller, the last one, moved into lib/live).
# Exit 0 when every arrow is allowed (and used), 1 when one is not, 2 for bad input.
#
# One nm over every object and one awk over its output, the table and the sources: the
# check ran nm and awk per object and per source file before (some 1,350 processes,
# minutes on a loaded 2-CPU machine); it now takes about a second.
set -u
build=${1:-build}
table=${2:-$(dirname "$0")/../docs/architecture.md}
src=${3:-}

# The known exceptions to "no -int.h under cli/", each FILE:HEADER, each with its reason
# (none).
int_exceptions=''

[ -d "$build/lib" ] || { echo "layers: no objects under $build/lib (build first)" >&2; exit 2; }
[ -r "$table" ] || { echo "layers: cannot read the layer table $table" >&2; exit 2; }
command -v nm >/dev/null || { echo "layers: nm (binutils) is needed" >&2; exit 2; }

tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT

# The objects (shell built-ins only: no process per object).
set --
for o in "$build"/lib/*/*.o "$build"/cli/*.o "$build"/cli/*/*.o; do
	[ -f "$o" ] || continue
	r=${o#"$build"/}
	[ -n "$src" ] && [ ! -f "$src/${r%.o}.c" ] && continue   # stale: its source moved
	set -- "$@" "$o"
done
# Every global symbol of every object, one line each: "OBJ:ADDRESS TYPE SYMBOL" where
# the object defines it, "OBJ: TYPE SYMBOL" (no address) where it only uses it.
if [ $# -gt 0 ]; then
	nm -A -g "$@" >"$tmp" || { echo "layers: nm failed on the objects of $build" >&2; exit 2; }
fi

# The sources whose includes are read (none without SRC: /dev/null keeps awk off stdin).
set -- /dev/null
if [ -n "$src" ]; then
	for f in "$src"/lib/*/*.c "$src"/lib/*/*.h "$src"/include/tacho/*.h \
		"$src"/cli/*.c "$src"/cli/*.h "$src"/cli/*/*.c "$src"/cli/*/*.h; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
fi

awk -v table="$table" -v syms="$tmp" -v build="$build" -v src="$src" \
	-v exceptions="$int_exceptions" '
function part_of(w) { sub(/\/.*/, "", w); return w }
function glob_match(pat, s,   re) {
	re = pat
	gsub(/[.+^$(){}|\\]/, "\\\\&", re)
	gsub(/\*/, ".*", re)
	gsub(/\?/, ".", re)
	return s ~ ("^" re "$")
}
function no_row(p) {
	if (!(p in told)) { print "layers: part \"" p "\" has no row in the table"; told[p] = 1 }
	badsym = 1
}
BEGIN {
	fatal = badsym = badinc = badcli = badarrow = 0
	# The tables: "PART USES..." lines between ```layers and ```, "PART AREAS..." between
	# ```areas and ```, comments dropped.
	while ((getline line < table) > 0) {
		if (line ~ /^```layers/) { block = "layers"; continue }
		if (line ~ /^```areas/) { block = "areas"; hasareas = 1; continue }
		if (line ~ /^```/) { block = ""; continue }
		if (block == "" || line ~ /^#/) continue
		n = split(line, f, /[ \t]+/)
		if (n == 0 || f[1] == "") continue
		if (block == "areas") {
			for (i = 2; i <= n; i++) owner[f[i]] = f[1]
			continue
		}
		part = f[1]
		known[part] = 1
		parts++
		for (i = 2; i <= n; i++) {
			if (f[i] == "-") continue
			if (f[i] == "*") any[part] = 1
			else if (substr(f[i], 1, 1) == "!") deny[part] = deny[part] " " substr(f[i], 2)
			else { allow[part, f[i]] = 1; arrow[++narrows] = part SUBSEP f[i] }
		}
	}
	close(table)
	if (!parts) { print "layers: " table " has no ```layers block" > "/dev/stderr"; fatal = 2; exit }
	if (src != "" && !hasareas) {
		print "layers: " table " has no ```areas block" > "/dev/stderr"; fatal = 2; exit
	}

	# The symbols: where each is defined (the first object that does), then each use.
	nuse = 0
	while ((getline line < syms) > 0) {
		split(line, f, " ")
		obj = f[1]
		undef = obj ~ /:$/                  # no address: used, not defined
		sub(/:[0-9a-fA-F]*$/, "", obj)
		who = substr(obj, length(build) + 2)   # lib/PART/FILE.o or cli/FILE.o
		sub(/^lib\//, "", who)
		if (undef) { usew[++nuse] = who; uses[nuse] = f[3]; continue }
		if (!(f[3] in where)) where[f[3]] = who
		p = part_of(who)
		if (!(p in known)) no_row(p)
	}
	close(syms)
	for (u = 1; u <= nuse; u++) {
		caller = usew[u]; sym = uses[u]; cp = part_of(caller)
		if (!(cp in known)) { no_row(cp); continue }
		if (deny[cp] != "") {
			nd = split(deny[cp], d, " ")
			for (i = 1; i <= nd; i++)
				if (glob_match(d[i], sym)) {
					print "layers: forbidden: " caller " -> " (sym in where ? where[sym] : "?") \
						": " sym " (denied to " cp ")"
					badsym = 1
				}
		}
		if (!(sym in where)) continue      # libc, libpfm4, elfutils, ...
		callee = where[sym]; ep = part_of(callee)
		if (ep == cp) continue
		used[cp, ep] = 1
		if (any[cp] || ((cp, ep) in allow)) continue
		print "layers: forbidden: " caller " -> " callee ": " sym
		badsym = 1
	}
	if (!badsym) print "layers: every call between parts is allowed (" parts " parts)"

	nexc = split(exceptions, e, " ")
	for (i = 1; i <= nexc; i++) excepted[e[i]] = 0
}

# The includes, line by line: lib/ and the area headers name public areas
# ("tacho/AREA.h"), cli/ names no private header.
FNR == 1 {
	file = FILENAME
	if (src != "" && substr(file, 1, length(src) + 1) == src "/")
		file = substr(file, length(src) + 2)
	cli = file ~ /^cli\//
	if (cli) clifiles++
}
!/^[ \t]*#[ \t]*include[ \t]*["<]/ { next }
{
	hdr = $0; sub(/^[^"<]*["<]/, "", hdr); sub(/[">].*/, "", hdr)
}
cli {
	if (hdr !~ /-int\.h$/) next
	if ((file ":" hdr) in excepted) { excepted[file ":" hdr] = 1; cliexc++; next }
	print "layers: forbidden include: " file ":" FNR ": \"" hdr "\": private to the library" \
		" (a command uses include/tacho/)"
	badcli = 1
	next
}
hdr !~ /^tacho[\/.]/ { next }
{
	includes++
	part = file; sub(/^lib\//, "", part); sub(/\/.*/, "", part)
	if (file ~ /^include\//) {        # an area header: its part is the one defining it
		self = file; sub(/^.*\//, "", self); sub(/\.h$/, "", self)
		if (!(self in owner)) {
			print "layers: " file ": area \"" self "\" has no row in the areas table"
			badinc = 1
			next
		}
		part = owner[self]
	}
	if (hdr == "tacho.h") {
		print "layers: forbidden include: " file ":" FNR ": \"tacho.h\"" \
			" (the umbrella: include the areas the file needs)"
		badinc = 1
		next
	}
	area = hdr; sub(/^tacho\//, "", area); sub(/\.h$/, "", area)
	if (!(area in owner)) {
		print "layers: " file ":" FNR ": \"" hdr "\": area \"" area "\"" \
			" has no row in the areas table"
		badinc = 1
		next
	}
	def = owner[area]
	if (def == part) next
	used[part, def] = 1
	if (any[part] || ((part, def) in allow)) next
	print "layers: forbidden include: " file ":" FNR ": \"" hdr "\": " part \
		" may not use " def
	badinc = 1
}

END {
	if (fatal) exit fatal
	if (src == "") exit badsym
	if (!badinc)
		print "layers: every public header a part includes is allowed (" includes " includes)"
	# An exception nothing needs any more is reported (in a tree with a cli/ at all).
	for (x in excepted)
		if (clifiles && !excepted[x]) {
			print "layers: known exception " x " is not needed any more" \
				" (remove it from scripts/check-layers.sh)"
			badcli = 1
		}
	if (!badcli)
		print "layers: no library-private header is included from cli/ (" \
			(cliexc + 0) " known exception" (cliexc == 1 ? "" : "s") ")"
	# In table order; an arrow used by an include only (a type, a macro) is still used.
	for (a = 1; a <= narrows; a++)
		if (!(arrow[a] in used)) {
			split(arrow[a], ab, SUBSEP)
			print "layers: unused: " ab[1] " -> " ab[2] \
				" (nothing uses it: remove it from the table)"
			badarrow = 1
		}
	if (!badarrow) print "layers: every arrow of the table is used (" narrows " arrows)"
	exit (badsym || badinc || badcli || badarrow)
}
' "$@"
