#!/bin/bash
# docs-shots.sh - capture the screenshots of docs/top.md, docs/serve.md and docs/watch.md
# from the real commands, into docs/img/ (nothing is drawn by hand):
#   top-process.png, top-plot.png, top-threads.png  tacho top in tmux (capture-pane -e,
#       the terminal's colours through aha to HTML, shot by headless Chromium);
#   serve-page.png                                  tacho serve's page in headless
#       Chromium, after a few seconds of counting;
#   watch-cap.png                                   tacho watch capping a busy program,
#       in tmux as above.
#
#   scripts/docs-shots.sh [BUILD]      (BUILD: default build; make BUILD=... tests first)
# Needs tmux, aha and chromium (scripts/deps.sh test). Takes about half a minute.
set -eu
b=${1:-build}
cd "$(dirname "$0")/.."
tacho=$b/tacho
helper=$b/tests/progs/live-helper
out=docs/img
for f in "$tacho" "$helper"; do
	[ -x "$f" ] || { echo "docs-shots.sh: $f is missing (make BUILD=$b tests)" >&2; exit 1; }
done
for c in tmux aha chromium; do
	command -v $c >/dev/null || { echo "docs-shots.sh: $c is missing (scripts/deps.sh test)" >&2; exit 1; }
done
mkdir -p "$out"
tmp=$(mktemp -d)
pids=()
cleanup() {
	tmux -S "$tmp/sock" kill-server 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# chromium's screenshot of a page: shot URL FILE WIDTH HEIGHT [virtual ms]
shot() {
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--virtual-time-budget="${5:-1000}" --window-size="$3,$4" \
		--screenshot="$tmp/shot.png" "$1" >/dev/null 2>"$tmp/chromium.log" ||
		{ cat "$tmp/chromium.log" >&2; exit 1; }
	cp "$tmp/shot.png" "$2"
	echo "docs-shots.sh: $2"
}

# a tmux pane, with its colours, as a picture: pane NAME FILE COLS ROWS
pane() {
	tmux -S "$tmp/sock" capture-pane -e -p -t "$1" |
		aha --black --title "$1" >"$tmp/$1.html"
	# a monospace font that has the sparklines' block elements, no margins
	sed -i 's|<pre>|<pre style="font-family: DejaVu Sans Mono, monospace; font-size: 13px; line-height: 1.2; margin: 8px">|' \
		"$tmp/$1.html"
	shot "file://$tmp/$1.html" "$2" $(($3 * 8 + 16)) $(($4 * 16 + 16))
}

# --- tacho top: two busy threads, a writer, then the plot of the selected row ---
"$helper" threads 2 60000 & pids+=($!)
"$helper" toggle 2000 & pids+=($!)
cols=132 rows=30
tmux -S "$tmp/sock" new-session -d -x $cols -y $rows -s top \
	"env LANG=C.UTF-8 $tacho top -d 0.5 -k 20"
sleep 8
pane top "$out/top-process.png" $cols $rows
tmux -S "$tmp/sock" send-keys -t top Enter
sleep 3
pane top "$out/top-plot.png" $cols $rows
tmux -S "$tmp/sock" send-keys -t top Escape t
sleep 4
pane top "$out/top-threads.png" $cols $rows
tmux -S "$tmp/sock" send-keys -t top q
sleep 0.5

# --- tacho serve: the page after a few seconds of counting ---
port=$((20000 + RANDOM % 20000))
"$tacho" serve --listen 127.0.0.1:$port -d 0.5 -k 12 >"$tmp/serve.log" 2>&1 & pids+=($!)
sleep 8
shot "http://127.0.0.1:$port/" "$out/serve-page.png" 1100 760 3000

# --- tacho watch: a busy program's write rate capped to 25 % ---
"$helper" progress "$tmp/count" "$(($(nproc) - 1))" & prog=$!
pids+=($prog)
tmux -S "$tmp/sock" new-session -d -x $cols -y 12 -s watch \
	"$tacho watch -d 0.5 -e syscalls:sys_enter_write --above 100 --for 1 --cap 25 -p $prog; sleep 60"
sleep 8
kill -USR1 $prog                        # the writes stop: the rule lifts
sleep 3
tmux -S "$tmp/sock" send-keys -t watch C-c
sleep 1
pane watch "$out/watch-cap.png" $cols 12
