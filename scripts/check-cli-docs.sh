#!/bin/bash
# check-cli-docs.sh - the manual pages and the shell completions that BUILD wrote from
# tacho's option tables (cli/doc.c, `tacho --dump-cli`) are whole and well formed:
#   - every page renders without a warning (mandoc -T lint, groff -ww);
#   - every option of every command (tacho --dump-cli options) is in its page, in the zsh
#     completion's function of its command, and the bash completion completes it from
#     its first letters after its command;
#   - the bash completion completes `tacho st` to stat and `tacho stat --rep` to --repeat;
#   - `make install` puts them where man and bash-completion look: man -w finds
#     tacho-stat under the installed MANPATH, sourcing the completion registers it.
# BUILD is only read (`-o all`).
#
#   scripts/check-cli-docs.sh [BUILD]      (default build; built already)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
tacho=$build/tacho
fail() { echo "check-cli-docs: FAILED: $*" >&2; exit 1; }
step() { echo "check-cli-docs: $*"; }
[ -e "$build/cli-docs.stamp" ] || fail "$build/man is missing: build first (make BUILD=$build)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tacho-cli-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pages=$("$tacho" --dump-cli pages)
step "pages: $(echo $pages)"
for p in $pages; do
	f=$build/man/$p.1
	[ -s "$f" ] || fail "$f was not written"
	if command -v mandoc >/dev/null; then
		out=$(mandoc -T lint -W warning "$f" 2>&1) || true
		[ -z "$out" ] || fail "mandoc -T lint $f: $out"
	fi
	if command -v groff >/dev/null; then
		out=$(groff -ww -man -Tutf8 "$f" 2>&1 >/dev/null) || true
		[ -z "$out" ] || fail "groff -ww $f: $out"
	fi
done
command -v mandoc >/dev/null || step "mandoc is not installed: pages checked with groff only"

# every option in its page, its zsh function and its bash completion
bash_comp=$build/completion/tacho
zsh_comp=$build/completion/_tacho
"$tacho" --dump-cli options >"$tmp/options"
# the pages and the zsh functions, in one awk (an awk and two greps for each option
# took a minute on a busy 2-core machine): an option's \fB-x\fR in its page
# (tacho-CMD.1, tacho.1 for the command's own), the option in the zsh completion's
# function of its command (_tacho_KEY, from its line "NAME() {" to the next "}"), in
# the order of the list, and the first that is missing fails
n=$(awk -F'\t' -v build="$build" -v zsh="$zsh_comp" '
function has_file(path, needle,    line, found) {
	if (!(path in text)) {
		text[path] = ""
		while ((getline line < path) > 0)
			text[path] = text[path] line "\n"
		close(path)
	}
	return index(text[path], needle) > 0
}
function zsh_body(fn,    i, on, b) {
	if (fn in body)
		return body[fn]
	b = ""
	for (i = 1; i <= nz; i++) {
		if (zl[i] == fn "() {")
			on = 1
		if (on)
			b = b zl[i] "\n"
		if (on && zl[i] ~ /^}$/)
			break
	}
	body[fn] = b
	return b
}
BEGIN { while ((getline line < zsh) > 0) zl[++nz] = line; close(zsh) }
{
	key = $1
	cmd = key; sub(/\/.*/, "", cmd)
	page = (cmd == "tacho") ? "tacho" : "tacho-" cmd
	fn = key; gsub(/[\/-]/, "_", fn); fn = "_tacho_" fn
	if (cmd == "tacho")
		fn = "_tacho"
	k = split($2 " " $3, opts, " ")
	for (i = 1; i <= k; i++) {
		o = opts[i]
		roff = o; gsub(/-/, "\\\\-", roff)
		if (!has_file(build "/man/" page ".1", "\\fB" roff "\\fR")) {
			print "check-cli-docs: FAILED: " o " of " key " is not in " page ".1" > "/dev/stderr"
			exit 1
		}
		if (index(zsh_body(fn), o) == 0) {
			print "check-cli-docs: FAILED: " o " of " key " is not in the zsh function " fn > "/dev/stderr"
			exit 1
		}
		n++
	}
}
END { print n + 0 }' "$tmp/options") || exit 1
while IFS=$'\t' read -r key short long; do
	cmd=${key%%/*}
	# bash: the words before the option, then its first three characters (two for -x)
	words=(tacho)
	[ "$cmd" != tacho ] && words+=("$cmd")
	[ "$key" != "$cmd" ] && words+=("${key#*/}")
	for o in $short $long; do
		pre=${o:0:3}
		[ ${#o} -eq 2 ] && pre=$o
		printf '%s\t%s\n' "${words[*]} $pre" "$o"
	done >>"$tmp/bash-cases"
done <"$tmp/options"
step "$n option names found in the pages and the zsh completion"

cat >"$tmp/drive.bash" <<'DRIVE'
source "$1"
while IFS=$'\t' read -r line want; do
	read -ra COMP_WORDS <<<"$line"
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_tacho
	found=0
	for w in "${COMPREPLY[@]}"; do [ "$w" = "$want" ] && found=1; done
	[ $found = 1 ] || { echo "'$line<TAB>' gives '${COMPREPLY[*]}', not $want"; exit 1; }
done
DRIVE
printf '%s\t%s\n' "tacho st" stat "tacho stat --rep" --repeat "tacho trace rep" report \
	>>"$tmp/bash-cases"
out=$(PATH=$PWD/$build:$PATH bash "$tmp/drive.bash" "$bash_comp" <"$tmp/bash-cases") \
	|| fail "bash completion: $out"
step "bash completes all $(wc -l <"$tmp/bash-cases") cases (tacho st -> stat, tacho stat --rep -> --repeat)"
if command -v zsh >/dev/null; then
	zsh -n "$zsh_comp" || fail "zsh -n $zsh_comp"
	step "zsh parses the completion"
else
	step "zsh is not installed: its completion's syntax is not checked"
fi

unset MAKEFLAGS MFLAGS MAKELEVEL
root=$tmp/root
make -s --no-print-directory -o all BUILD="$build" PREFIX=/usr/local DESTDIR="$root" install \
	>/dev/null || fail "make install"
found=$(MANPATH=$root/usr/local/share/man man -w tacho-stat 2>&1) \
	|| fail "man -w tacho-stat under the installed MANPATH: $found"
[ "$found" = "$root/usr/local/share/man/man1/tacho-stat.1" ] || fail "man -w found '$found'"
out=$(bash -c "source '$root/usr/local/share/bash-completion/completions/tacho'; complete -p tacho") \
	|| fail "sourcing the installed completion"
grep -q -- '-F _tacho tacho$' <<<"$out" || fail "complete -p tacho says '$out'"
[ -s "$root/usr/local/share/zsh/vendor-completions/_tacho" ] || fail "_tacho was not installed"
step "installed: man -w tacho-stat finds $found; complete -p tacho: $out"
step "ok"
