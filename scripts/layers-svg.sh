#!/bin/sh
# layers-svg.sh - draws the layer table as an SVG picture (docs/img/layers.svg).
#
#   scripts/layers-svg.sh [TABLE] > docs/img/layers.svg
#
# Reads the ```layers block of TABLE (default docs/architecture.md), the same table
# scripts/check-layers.sh enforces, and writes the picture on standard output: one row
# per level (a part's level is one above the highest of the parts it uses; util at the
# bottom, cli at the top), a box per part, an arrow from a part to each part it uses.
# An arrow that a path through another part already implies (tsc -> util, as tsc ->
# perf -> util is drawn) is left out, so that the picture shows the shape; the table
# stays the whole truth, and the caption says so.
# The picture is made from the table and nothing else, and test-layers checks that the
# committed one is what this script makes now, so it cannot drift from the code.
# Exit 0, or 2 when the table cannot be read or has no layers block.
set -u
table=${1:-$(dirname "$0")/../docs/architecture.md}
[ -r "$table" ] || { echo "layers-svg: cannot read the layer table $table" >&2; exit 2; }

awk '
/^```layers/ { inblock = 1; next }
inblock && /^```/ { inblock = 0; done = 1; next }
inblock {
	sub(/#.*/, "")
	if (NF == 0)
		next
	p = $1
	order[++np] = p
	for (i = 2; i <= NF; i++) {
		if ($i == "-" || $i ~ /^!/)
			continue
		uses[p, $i] = 1
	}
	next
}
END {
	if (!done || np == 0) {
		print "layers-svg: no ```layers block in the table" > "/dev/stderr"
		exit 2
	}
	# "*": every other part (the command line may use the whole library)
	for (a = 1; a <= np; a++)
		if ((order[a], "*") in uses) {
			delete uses[order[a], "*"]
			for (b = 1; b <= np; b++)
				if (b != a)
					uses[order[a], order[b]] = 1
		}
	# reach[a, b]: a uses b, directly or through others (Floyd-Warshall)
	for (a = 1; a <= np; a++)
		for (b = 1; b <= np; b++)
			reach[a, b] = ((order[a], order[b]) in uses)
	for (k = 1; k <= np; k++)
		for (a = 1; a <= np; a++)
			if (reach[a, k])
				for (b = 1; b <= np; b++)
					if (reach[k, b])
						reach[a, b] = 1
	# levels: one above the highest part used (np rounds settle any order of rows;
	# a cycle, which check-layers refuses, only stops rising there)
	for (a = 1; a <= np; a++)
		lev[a] = 0
	for (round = 1; round <= np; round++)
		for (a = 1; a <= np; a++)
			for (b = 1; b <= np; b++)
				if (b != a && reach[a, b] && lev[b] + 1 > lev[a])
					lev[a] = lev[b] + 1
	maxlev = 0
	for (a = 1; a <= np; a++) {
		if (lev[a] > maxlev)
			maxlev = lev[a]
		n_at[lev[a]]++
	}
	# drawn: the arrows no path through another part implies
	for (a = 1; a <= np; a++)
		for (b = 1; b <= np; b++) {
			drawn[a, b] = 0
			if (!((order[a], order[b]) in uses))
				continue
			implied = 0
			for (k = 1; k <= np && !implied; k++)
				if (k != a && k != b && reach[a, k] && reach[k, b])
					implied = 1
			drawn[a, b] = !implied
		}
	bw = 92; bh = 30; gapx = 22; rowh = 78; margin = 24
	widest = 0
	for (l = 0; l <= maxlev; l++)
		if (n_at[l] > widest)
			widest = n_at[l]
	width = 2 * margin + widest * bw + (widest - 1) * gapx
	if (width < 560)
		width = 560
	height = 2 * margin + (maxlev + 1) * rowh + 30
	# rows from the bottom up, each part under the middle of the parts it points to
	# (fewer crossings), ties in the order of the table
	for (l = 0; l <= maxlev; l++) {
		m = 0
		for (a = 1; a <= np; a++) {
			if (lev[a] != l)
				continue
			sum = 0; cnt = 0
			for (b = 1; b <= np; b++)
				if (drawn[a, b] && lev[b] < l) {
					sum += x[b]; cnt++
				}
			key[a] = cnt ? sum / cnt : width / 2
			row[++m] = a
		}
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && key[row[j]] < key[row[j - 1]]; j--) {
				t = row[j]; row[j] = row[j - 1]; row[j - 1] = t
			}
		rw = m * bw + (m - 1) * gapx
		for (i = 1; i <= m; i++) {
			a = row[i]
			x[a] = (width - rw) / 2 + (i - 1) * (bw + gapx)
			y[a] = margin + (maxlev - l) * rowh
		}
	}
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " \
	       "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">\n",
	       width, height, width, height
	print "<title>tacho: the parts of the library and the parts each may use</title>"
	print "<defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" " \
	      "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">" \
	      "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#667\"/></marker></defs>"
	printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height
	# the arrows no other path implies
	for (a = 1; a <= np; a++)
		for (b = 1; b <= np; b++) {
			if (!drawn[a, b])
				continue
			printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#667\" " \
			       "stroke-width=\"1.2\" marker-end=\"url(#head)\"/>\n",
			       x[a] + bw / 2, y[a] + bh, x[b] + bw / 2, y[b]
		}
	for (a = 1; a <= np; a++) {
		fill = order[a] == "cli" ? "#fde8c8" : "#dde8f6"
		printf "<rect x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"5\" " \
		       "fill=\"%s\" stroke=\"#345\"/>\n", x[a], y[a], bw, bh, fill
		printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		       x[a] + bw / 2, y[a] + 20, order[a] == "cli" ? "cli/" : "lib/" order[a]
	}
	printf "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#445\">An arrow: may " \
	       "call. An arrow that a path through other parts implies is left out:</text>\n",
	       margin, height - 30
	printf "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#445\">the layer table " \
	       "of docs/architecture.md has every one.</text>\n", margin, height - 15
	print "</svg>"
}
' "$table"
