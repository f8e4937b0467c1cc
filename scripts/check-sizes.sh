#!/bin/sh
# check-sizes.sh - the sizes of the house (docs/architecture.md, "Sizes"; issue 28).
#
#   scripts/check-sizes.sh [SRC] [DOC]
#
# Measures, in the source tree SRC (default: the one this script is in):
# - every part of the library: the lines of its C files, lib/PART/*.c (limit 6,000);
# - every file of lib/ and cli/ (*.c, *.h, one folder deep under cli/ too): its lines
#   (limit 1,200);
# - every C function defined in those files: its lines from the line of its opening
#   brace to the line of its closing brace (limit 150).
# Anything over its limit fails the check, named with its size, as
#   sizes: over: function lib/perf/explain.c:tc_perf_explain: 206 lines (limit 150)
# unless the ```sizes block of DOC (default docs/architecture.md) lists it as a known
# exception, one a line:
#   part      lib/PART
#   file      lib/PART/FILE.c            (or cli/...)
#   function  lib/PART/FILE.c:NAME
# each with its why in the page's prose after the block (to the next heading), which
# must name it in backticks (`lib/PART`, `NAME`), or the check fails. A listed exception
# that is no longer over its limit fails too, as
#   sizes: not over any more, or not there: ... (remove it from the sizes block ...)
# so that the list only shrinks, and so does one that names nothing there is.
# Exit 0 when everything is within its limit or excepted, 1 when not, 2 for bad input.
#
# A function is found by a scan of braces, not by a C parser: comments, string and
# character literals and preprocessor lines are skipped, and a brace opened at depth 0
# after a ")" that a "struct", "union", "enum" or "=" does not precede opens a function
# whose name is the identifier before its parameter list (the last parenthesized group).
# One awk over every file: a tenth of a second of CPU, under a second here.
set -u
here=$(dirname "$0")
src=${1:-$here/..}
doc=${2:-$src/docs/architecture.md}

[ -d "$src/lib" ] || { echo "sizes: no lib/ under $src" >&2; exit 2; }
[ -r "$doc" ] || { echo "sizes: cannot read $doc" >&2; exit 2; }

set --
for f in "$src"/lib/*/*.c "$src"/lib/*/*.h "$src"/cli/*.c "$src"/cli/*.h \
	"$src"/cli/*/*.c "$src"/cli/*/*.h; do
	[ -f "$f" ] && set -- "$@" "$f"
done
[ $# -gt 0 ] || { echo "sizes: no C files under $src/lib" >&2; exit 2; }

awk -v doc="$doc" -v src="$src" -v part_limit=6000 -v file_limit=1200 -v fn_limit=150 '
BEGIN {
	# The known exceptions: "KIND WHAT" lines between ```sizes and ```.
	while ((getline line < doc) > 0) {
		if (line ~ /^```sizes/) { inblock = 1; found = 1; continue }
		if (line ~ /^```/) { inblock = 0; after = found; continue }
		# the prose after the block, to its next heading: the why of each
		if (after && line ~ /^#/) after = 0
		if (after) { prose = prose " " line; continue }
		if (!inblock || line ~ /^[ \t]*(#|$)/) continue
		n = split(line, f, /[ \t]+/)
		if (f[1] == "") { for (i = 1; i < n; i++) f[i] = f[i + 1]; n-- }
		if (n != 2 || (f[1] != "part" && f[1] != "file" && f[1] != "function")) {
			print "sizes: " doc ": bad line in the sizes block: " line > "/dev/stderr"
			fatal = 2; exit
		}
		exc[f[1] " " f[2]] = 0
	}
	close(doc)
	if (!found) { print "sizes: " doc " has no ```sizes block" > "/dev/stderr"; fatal = 2; exit }
	# each exception is named in the prose, in backticks (a function by its name)
	for (x in exc) {
		name = x; sub(/^[a-z]* /, "", name)
		if (x ~ /^function /) sub(/^.*:/, "", name)
		if (!index(prose, "`" name "`")) {
			print "sizes: listed but not explained: " x \
				" (say why below the sizes block, naming `" name "`)"
			bad = 1
		}
	}
}

function report(kind, what, size, limit) {
	if ((kind " " what) in exc) { exc[kind " " what] = size; excepted++; return }
	printf "sizes: over: %s %s: %d lines (limit %d)\n", kind, what, size, limit
	bad = 1
}

function end_file() {
	if (file == "") return
	if (FNR_last > file_limit) report("file", file, FNR_last, file_limit)
	if (file ~ /^lib\/[^\/]*\/[^\/]*\.c$/) {
		p = file; sub(/\/[^\/]*$/, "", p)
		partlines[p] += FNR_last
	}
}

FNR == 1 {
	end_file()
	file = FILENAME
	if (substr(file, 1, length(src) + 1) == src "/") file = substr(file, length(src) + 2)
	sub(/^(\.\/)+/, "", file)
	files++
	depth = 0; incomment = 0; cont = 0; head = ""
}
{
	FNR_last = FNR
	line = $0
	# a preprocessor line and its continuations: no braces of the code
	if (cont) { cont = line ~ /\\$/; next }
	if (!incomment && line ~ /^[ \t]*#/) { cont = line ~ /\\$/; next }
	# The line without comments and literals, scanned character by character only where
	# it has something to strip.
	out = ""
	while (line != "") {
		if (incomment) {
			k = index(line, "*/")
			if (!k) { line = ""; break }
			line = substr(line, k + 2); incomment = 0; continue
		}
		if (!match(line, /\/\*|\/\/|"|\047/)) { out = out line; break }
		out = out substr(line, 1, RSTART - 1)
		tok = substr(line, RSTART, RLENGTH)
		line = substr(line, RSTART + RLENGTH)
		if (tok == "/*") { incomment = 1; out = out " "; continue }
		if (tok == "//") { line = ""; break }
		# a literal: to its closing quote, past escapes
		q = tok; i = 1; L = length(line)
		while (i <= L) {
			c = substr(line, i, 1)
			if (c == "\\") { i += 2; continue }
			if (c == q) break
			i++
		}
		line = substr(line, i + 1)
		out = out q q
	}
	# braces, in order
	rest = out
	while (match(rest, /[{};]/)) {
		c = substr(rest, RSTART, 1)
		pre = substr(rest, 1, RSTART - 1)
		rest = substr(rest, RSTART + 1)
		if (depth == 0) head = head " " pre
		if (c == "{") {
			if (depth == 0) {
				isfn = 0
				h = head
				if (h ~ /\)[ \t]*$/ && h !~ /(^|[^A-Za-z0-9_])(struct|union|enum)[ \t]+[A-Za-z0-9_]*[ \t]*$/ &&
				    h !~ /=/) {
					# the name: the identifier before the last group of
					# parentheses of the head (the parameters; attributes come before them)
					k = length(h); pd = 0
					for (; k > 0; k--) {
						c2 = substr(h, k, 1)
						if (c2 == ")") pd++
						else if (c2 == "(" && --pd == 0) break
					}
					nm = substr(h, 1, k - 1)
					sub(/[ \t]+$/, "", nm)
					if (match(nm, /[A-Za-z_][A-Za-z0-9_]*$/)) {
						fname = substr(nm, RSTART, RLENGTH)
						isfn = fname !~ /^(if|while|for|switch|return|sizeof)$/
					}
				}
				infn = isfn; start = FNR
			}
			depth++
		} else if (c == "}") {
			depth--
			if (depth == 0) {
				if (infn) {
					functions++
					size = FNR - start + 1
					if (size > fn_limit) report("function", file ":" fname, size, fn_limit)
				}
				infn = 0; head = ""
			}
		} else if (depth == 0) head = ""
	}
	if (depth == 0) head = head " " rest
}

END {
	if (fatal) exit fatal
	end_file()
	nparts = 0
	for (p in partlines) {
		nparts++
		if (partlines[p] > part_limit) report("part", p, partlines[p], part_limit)
	}
	for (x in exc)
		if (!exc[x]) {
			print "sizes: not over any more, or not there: " x \
				" (remove it from the sizes block of the page)"
			bad = 1
		}
	if (!bad)
		printf "sizes: %d parts, %d files and %d functions within their limits " \
			"or known exceptions (%d)\n", nparts, files, functions, excepted + 0
	exit bad
}
' "$@"
