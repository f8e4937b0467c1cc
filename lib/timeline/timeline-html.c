/* timeline-html.c - a trace as one HTML page a person reads at any density: the items
 * embedded as JSON, drawn on a canvas by a small script that zooms (wheel, + and -),
 * pans (drag, arrows), shows each item under the pointer, with no network. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "timeline/timeline.h"
#include "tacho/errors.h"
#include "tacho/timeline.h"

/* The page's script (docs/trace.md, "HTML"): hand-written for this page, about 250
 * lines, since a timeline of rows of ticks, bars and steps is a few canvas calls and
 * the page must open anywhere, offline, from one file. It reads the JSON of
 * #trace-data (rows of columns: t, and v, d, level, open or cpu by kind), draws the
 * view [v0, v1] in ns from the trace's start, and after each drawing sets
 * data-items, data-threads, data-rows, data-view-start, data-view-end and data-visible
 * (the items whose time lies in view) on <body>: what a test reads back. */
static const char view_js[] =
	"(function () {\n"
	"	'use strict';\n"
	"	var D = JSON.parse(document.getElementById('trace-data').textContent);\n"
	"	var ROW = 20, TOP = 28, LEFT = 260, BOTTOM = 6;\n"
	"	var cv = document.getElementById('view'), tip = document.getElementById('tip');\n"
	"	var ctx = cv.getContext('2d');\n"
	"	var span = Math.max(D.span_ns, 1), v0 = 0, v1 = span, width = 0;\n"
	"	var COLORS = { mark: '#4d4d4c', event: '#c82829', span: '#7aa6da', counter: '#3e999f' };\n"
	"\n"
	"	/* the ends of the spans that ended, sorted, to count the edges in view */\n"
	"	D.rows.forEach(function (r) {\n"
	"		if (r.kind === 'span')\n"
	"			r.e = r.t.map(function (b, i) { return b + r.d[i]; })\n"
	"				.filter(function (e, i) { return !r.open[i]; })\n"
	"				.sort(function (a, b) { return a - b; });\n"
	"		r.max = 0;\n"
	"		if (r.kind === 'counter')\n"
	"			r.v.forEach(function (x) { if (x > r.max) r.max = x; });\n"
	"	});\n"
	"\n"
	"	function lower(a, x) {   /* the first index of a whose value is >= x */\n"
	"		var lo = 0, hi = a.length;\n"
	"		while (lo < hi) {\n"
	"			var mid = (lo + hi) >> 1;\n"
	"			if (a[mid] < x) lo = mid + 1; else hi = mid;\n"
	"		}\n"
	"		return lo;\n"
	"	}\n"
	"	function upper(a, x) {   /* the first index of a whose value is > x */\n"
	"		var lo = 0, hi = a.length;\n"
	"		while (lo < hi) {\n"
	"			var mid = (lo + hi) >> 1;\n"
	"			if (a[mid] <= x) lo = mid + 1; else hi = mid;\n"
	"		}\n"
	"		return lo;\n"
	"	}\n"
	"	function fmt(ns) {\n"
	"		var a = Math.abs(ns);\n"
	"		if (a < 1e3) return ns.toFixed(0) + ' ns';\n"
	"		if (a < 1e6) return (ns / 1e3).toFixed(3) + ' us';\n"
	"		if (a < 1e9) return (ns / 1e6).toFixed(3) + ' ms';\n"
	"		return (ns / 1e9).toFixed(3) + ' s';\n"
	"	}\n"
	"	function xOf(t) { return LEFT + (t - v0) / (v1 - v0) * width; }\n"
	"	function tOf(x) { return v0 + (x - LEFT) / width * (v1 - v0); }\n"
	"\n"
	"	function clamp() {\n"
	"		var len = Math.min(Math.max(v1 - v0, 10), span);\n"
	"		if (v0 < 0) v0 = 0;\n"
	"		v1 = v0 + len;\n"
	"		if (v1 > span) { v1 = span; v0 = span - len; }\n"
	"	}\n"
	"\n"
	"	function axis() {\n"
	"		/* a tick at least 100 pixels from the next: 1, 2 or 5 times a power of ten ns */\n"
	"		var len = v1 - v0, least = len * 100 / width;\n"
	"		var step = Math.pow(10, Math.floor(Math.log10(least)));\n"
	"		if (step < least) step *= 2;\n"
	"		if (step < least) step *= 2.5;\n"
	"		if (step < least) step *= 2;\n"
	"		ctx.fillStyle = '#333';\n"
	"		ctx.textAlign = 'center';\n"
	"		for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {\n"
	"			var x = xOf(t);\n"
	"			ctx.strokeStyle = '#e4e4e4';\n"
	"			ctx.beginPath(); ctx.moveTo(x + 0.5, TOP - 6); ctx.lineTo(x + 0.5, cv.height); ctx.stroke();\n"
	"			ctx.fillText(fmt(t), x, 14);\n"
	"		}\n"
	"		ctx.textAlign = 'left';\n"
	"	}\n"
	"\n"
	"	/* marks and events: one tick per pixel column, darker the more items it holds */\n"
	"	function ticks(r, y) {\n"
	"		var lo = lower(r.t, v0), hi = upper(r.t, v1), col = -1, n = 0, drawn = 0;\n"
	"		function flush() {\n"
	"			if (!n) return;\n"
	"			ctx.globalAlpha = Math.min(1, 0.45 + 0.12 * Math.log2(n));\n"
	"			ctx.fillRect(col, y + 2, 1, ROW - 4);\n"
	"			drawn++;\n"
	"		}\n"
	"		ctx.fillStyle = COLORS[r.kind];\n"
	"		for (var i = lo; i < hi; i++) {\n"
	"			var c = Math.floor(xOf(r.t[i]));\n"
	"			if (c !== col) { flush(); col = c; n = 0; }\n"
	"			n++;\n"
	"		}\n"
	"		flush();\n"
	"		ctx.globalAlpha = 1;\n"
	"		return drawn;\n"
	"	}\n"
	"\n"
	"	/* spans: bars, at least a pixel wide; bars that fall in one pixel are drawn once */\n"
	"	function bars(r, y) {\n"
	"		var last = -1, depth = 0;\n"
	"		ctx.fillStyle = COLORS.span;\n"
	"		ctx.globalAlpha = 0.7;\n"
	"		for (var i = 0; i < r.t.length && r.t[i] <= v1; i++) {\n"
	"			var b = r.t[i], e = b + r.d[i];\n"
	"			if (e < v0) continue;\n"
	"			var x0 = Math.max(xOf(b), LEFT), x1 = Math.min(xOf(e), LEFT + width);\n"
	"			if (x1 - x0 < 1) {\n"
	"				if (Math.floor(x0) === last) continue;\n"
	"				x1 = x0 + 1;\n"
	"			}\n"
	"			last = Math.floor(x0);\n"
	"			depth = r.level ? r.level[i] : 0;\n"
	"			ctx.fillRect(x0, y + 2 + depth * 3, x1 - x0, ROW - 4 - depth * 3);\n"
	"			/* where spans follow one another, the begin of each shows */\n"
	"			if (x1 - x0 > 3) {\n"
	"				ctx.globalAlpha = 1;\n"
	"				ctx.fillStyle = '#3b6ea5';\n"
	"				ctx.fillRect(x0, y + 2 + depth * 3, 1, ROW - 4 - depth * 3);\n"
	"				ctx.fillStyle = COLORS.span;\n"
	"				ctx.globalAlpha = 0.7;\n"
	"			}\n"
	"		}\n"
	"		ctx.globalAlpha = 1;\n"
	"	}\n"
	"\n"
	"	/* counters: a step line scaled to the row's largest value */\n"
	"	function steps(r, y) {\n"
	"		var lo = Math.max(lower(r.t, v0) - 1, 0), hi = Math.min(upper(r.t, v1) + 1, r.t.length);\n"
	"		function yOf(v) { return y + ROW - 3 - (r.max ? (ROW - 6) * v / r.max : 0); }\n"
	"		ctx.strokeStyle = COLORS.counter;\n"
	"		ctx.beginPath();\n"
	"		for (var i = lo; i < hi; i++) {\n"
	"			var x = Math.min(Math.max(xOf(r.t[i]), LEFT), LEFT + width);\n"
	"			if (i === lo) ctx.moveTo(x, yOf(r.v[i]));\n"
	"			else { ctx.lineTo(x, yOf(r.v[i - 1])); ctx.lineTo(x, yOf(r.v[i])); }\n"
	"		}\n"
	"		if (hi > lo && hi === r.t.length) ctx.lineTo(LEFT + width, yOf(r.v[hi - 1]));\n"
	"		ctx.stroke();\n"
	"	}\n"
	"\n"
	"	function arrows() {\n"
	"		ctx.strokeStyle = '#8959a8';\n"
	"		ctx.globalAlpha = 0.8;\n"
	"		D.flows.forEach(function (f) {\n"
	"			var a = D.rows[f[0]], b = D.rows[f[2]], ta = a.t[f[1]], tb = b.t[f[3]];\n"
	"			if (tb < v0 || ta > v1) return;\n"
	"			ctx.beginPath();\n"
	"			ctx.moveTo(xOf(ta), TOP + f[0] * ROW + ROW / 2);\n"
	"			ctx.lineTo(xOf(tb), TOP + f[2] * ROW + ROW / 2);\n"
	"			ctx.stroke();\n"
	"		});\n"
	"		ctx.globalAlpha = 1;\n"
	"	}\n"
	"\n"
	"	function visible() {\n"
	"		var n = 0;\n"
	"		D.rows.forEach(function (r) {\n"
	"			n += upper(r.t, v1) - lower(r.t, v0);\n"
	"			if (r.e) n += upper(r.e, v1) - lower(r.e, v0);\n"
	"		});\n"
	"		return n;\n"
	"	}\n"
	"\n"
	"	function draw() {\n"
	"		clamp();\n"
	"		var w = Math.max(document.documentElement.clientWidth - 16, LEFT + 200);\n"
	"		cv.width = w;\n"
	"		cv.height = TOP + D.rows.length * ROW + BOTTOM;\n"
	"		width = w - LEFT - 10;\n"
	"		ctx.font = '12px monospace';\n"
	"		ctx.fillStyle = '#fff';\n"
	"		ctx.fillRect(0, 0, cv.width, cv.height);\n"
	"		axis();\n"
	"		D.rows.forEach(function (r, k) {\n"
	"			var y = TOP + k * ROW, th = D.threads[r.thread];\n"
	"			if (k % 2) { ctx.fillStyle = '#f7f7f7'; ctx.fillRect(0, y, cv.width, ROW); }\n"
	"			ctx.save();\n"
	"			ctx.beginPath(); ctx.rect(LEFT, y, width, ROW); ctx.clip();\n"
	"			if (r.kind === 'span') bars(r, y);\n"
	"			else if (r.kind === 'counter') steps(r, y);\n"
	"			else ticks(r, y);\n"
	"			ctx.restore();\n"
	"			ctx.fillStyle = '#333';\n"
	"			ctx.fillText((th.tid + ' ' + th.comm + '  ' + r.channel).slice(0, 34), 4, y + 14);\n"
	"		});\n"
	"		ctx.save();\n"
	"		ctx.beginPath(); ctx.rect(LEFT, TOP, width, cv.height); ctx.clip();\n"
	"		arrows();\n"
	"		ctx.restore();\n"
	"		document.getElementById('range').textContent = fmt(v0) + ' to ' + fmt(v1) +\n"
	"			' (' + fmt(v1 - v0) + ' shown of ' + fmt(span) + ')';\n"
	"		var ds = document.body.dataset;\n"
	"		ds.items = D.items;\n"
	"		ds.threads = D.threads.length;\n"
	"		ds.rows = D.rows.length;\n"
	"		ds.viewStart = Math.round(v0);\n"
	"		ds.viewEnd = Math.round(v1);\n"
	"		ds.visible = visible();\n"
	"		ds.drawn = (+(ds.drawn || 0) + 1).toString();\n"
	"	}\n"
	"\n"
	"	function zoom(f, at) {\n"
	"		var t = at === undefined ? (v0 + v1) / 2 : at;\n"
	"		v0 = t - (t - v0) * f;\n"
	"		v1 = t + (v1 - t) * f;\n"
	"		draw();\n"
	"	}\n"
	"	function pan(dx) { var d = (v1 - v0) * dx; v0 += d; v1 += d; draw(); }\n"
	"\n"
	"	/* #zoom=START,END in ns from the trace's start: the view a link or a test asks for */\n"
	"	function fromHash() {\n"
	"		var m = /^#zoom=([0-9.]+),([0-9.]+)$/.exec(location.hash);\n"
	"		if (m && +m[2] > +m[1]) { v0 = +m[1]; v1 = +m[2]; }\n"
	"		draw();\n"
	"	}\n"
	"\n"
	"	/* the item under the pointer: the nearest within 4 pixels on its row */\n"
	"	function hit(x, y) {\n"
	"		var k = Math.floor((y - TOP) / ROW), r = D.rows[k];\n"
	"		if (!r || x < LEFT) return null;\n"
	"		var t = tOf(x), slack = 4 * (v1 - v0) / width, th = D.threads[r.thread];\n"
	"		var head = th.tid + ' ' + th.comm + ' (process ' + th.pid + ')\\n' + r.channel + ' (' + r.kind + ')\\n';\n"
	"		if (r.kind === 'span') {\n"
	"			for (var i = 0; i < r.t.length && r.t[i] <= t + slack; i++)\n"
	"				if (r.t[i] + r.d[i] >= t - slack)\n"
	"					return head + 'at ' + fmt(r.t[i]) + ', lasted ' + fmt(r.d[i]) + (r.open && r.open[i] ? ' (not ended in the trace)' : '');\n"
	"			return null;\n"
	"		}\n"
	"		var lo = lower(r.t, t - slack), hi = upper(r.t, t + slack);\n"
	"		if (lo >= hi) return null;\n"
	"		var best = lo;\n"
	"		for (var j = lo; j < hi; j++)\n"
	"			if (Math.abs(r.t[j] - t) < Math.abs(r.t[best] - t)) best = j;\n"
	"		var s = head + 'at ' + fmt(r.t[best]);\n"
	"		if (r.kind !== 'event') s += ', value ' + r.v[best];\n"
	"		if (r.cpu) s += ', cpu ' + r.cpu[best];\n"
	"		if (hi - lo > 1) s += '\\n' + (hi - lo) + ' items within 4 pixels: zoom in (wheel, +) to part them';\n"
	"		return s;\n"
	"	}\n"
	"\n"
	"	var drag = null;\n"
	"	cv.addEventListener('wheel', function (e) {\n"
	"		e.preventDefault();\n"
	"		zoom(e.deltaY > 0 ? 1.25 : 0.8, e.offsetX >= LEFT ? tOf(e.offsetX) : undefined);\n"
	"	}, { passive: false });\n"
	"	cv.addEventListener('mousedown', function (e) { drag = { x: e.clientX, v0: v0, v1: v1 }; });\n"
	"	window.addEventListener('mouseup', function () { drag = null; });\n"
	"	window.addEventListener('mousemove', function (e) {\n"
	"		if (drag) {\n"
	"			var d = (drag.x - e.clientX) / width * (drag.v1 - drag.v0);\n"
	"			v0 = drag.v0 + d; v1 = drag.v1 + d;\n"
	"			draw();\n"
	"			return;\n"
	"		}\n"
	"		var rect = cv.getBoundingClientRect(), s = e.target === cv ? hit(e.clientX - rect.left, e.clientY - rect.top) : null;\n"
	"		tip.style.display = s ? 'block' : 'none';\n"
	"		if (s) {\n"
	"			tip.textContent = s;\n"
	"			tip.style.left = (e.pageX + 12) + 'px';\n"
	"			tip.style.top = (e.pageY + 12) + 'px';\n"
	"		}\n"
	"	});\n"
	"	window.addEventListener('keydown', function (e) {\n"
	"		if (e.key === '+' || e.key === '=') zoom(0.8);\n"
	"		else if (e.key === '-') zoom(1.25);\n"
	"		else if (e.key === 'ArrowLeft') pan(-0.1);\n"
	"		else if (e.key === 'ArrowRight') pan(0.1);\n"
	"		else if (e.key === '0' || e.key === 'Home') { v0 = 0; v1 = span; draw(); }\n"
	"	});\n"
	"	window.addEventListener('resize', draw);\n"
	"	window.addEventListener('hashchange', fromHash);\n"
	"	fromHash();\n"
	"})();\n";

#define SPAN_DEPTH 64   /* nesting kept per row, as the SVG view's */
#define LEVELS 4        /* nesting levels drawn apart */

struct hrow {
	uint32_t thread;        /* index into the page's threads */
	uint32_t tid, chan;
	size_t first, n;        /* its items in order[] */
};

struct page {
	const struct tacho_timeline *t;
	struct tc_tl_thread *th;      /* the trace's threads, and any tid it does not name */
	size_t nth;
	struct hrow *rows;
	size_t nrows;
	size_t *order;                /* items grouped by row, in time order within it */
	uint32_t *row_of;             /* [item] its row */
	size_t *pos_of;               /* [item] its index in its row's t (a mark's) */
};

static int thread_index(struct page *p, struct tc_hmap *idx, uint32_t pid, uint32_t tid,
			uint32_t *out)
{
	struct tc_tl_thread *nt;

	if (tc_hmap_get(idx, tid, out))
		return 0;
	nt = realloc(p->th, (p->nth + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	p->th = nt;
	memset(&nt[p->nth], 0, sizeof(*nt));
	nt[p->nth].pid = pid;
	nt[p->nth].tid = tid;
	*out = (uint32_t)p->nth;
	return tc_hmap_put(idx, tid, (uint32_t)p->nth++);
}

static int hrow_cmp(const void *a, const void *b)
{
	const struct hrow *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->chan < y->chan ? -1 : x->chan > y->chan;
}

/* Rows: a thread's channels together, threads in the trace's order, then channels in
 * the order they first appear; order[] holds each row's items. */
static int page_rows(struct page *p)
{
	const struct tacho_timeline *t = p->t;
	struct tc_hmap threads, rows;
	size_t *fill = NULL;
	int err = 0;

	if (t->n >= UINT32_MAX)   /* the maps hold an index in 32 bits */
		return -TACHO_EOUTOFRANGE;
	tc_hmap_init(&threads);
	tc_hmap_init(&rows);
	p->th = malloc((t->nthreads + 1) * sizeof(*p->th));
	p->row_of = malloc((t->n + 1) * sizeof(*p->row_of));
	p->pos_of = calloc(t->n + 1, sizeof(*p->pos_of));
	p->order = malloc((t->n + 1) * sizeof(*p->order));
	if (!p->th || !p->row_of || !p->pos_of || !p->order) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->nthreads && !err; i++) {
		uint32_t k;
		if (tc_hmap_get(&threads, t->threads[i].tid, &k))
			continue;   /* a tid the trace names twice (reused) is one row */
		p->th[p->nth] = t->threads[i];
		snprintf(p->th[p->nth].comm, sizeof(p->th[p->nth].comm), "%s",
			 tc_tl_comm(t, t->threads[i].tid));
		err = tc_hmap_put(&threads, t->threads[i].tid, (uint32_t)p->nth++);
	}
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct tc_tl_item *it = &t->items[i];
		uint64_t key = (uint64_t)it->tid << 32 | it->chan;
		uint32_t th, r;

		if (tc_hmap_get(&rows, key, &r)) {
			p->row_of[i] = r;
			p->rows[r].n++;
			continue;
		}
		err = thread_index(p, &threads, it->pid, it->tid, &th);
		if (err)
			break;
		struct hrow *nr = realloc(p->rows, (p->nrows + 1) * sizeof(*nr));
		if (!nr) {
			err = -ENOMEM;
			break;
		}
		p->rows = nr;
		nr[p->nrows] = (struct hrow){ .thread = th, .tid = it->tid, .chan = it->chan,
					      .n = 1 };
		p->row_of[i] = (uint32_t)p->nrows;
		err = tc_hmap_put(&rows, key, (uint32_t)p->nrows++);
	}
	if (err || !p->nrows)
		goto out;
	/* sort the rows, then renumber each item's row through the map */
	qsort(p->rows, p->nrows, sizeof(*p->rows), hrow_cmp);
	for (size_t r = 0; r < p->nrows && !err; r++)
		err = tc_hmap_put(&rows, (uint64_t)p->rows[r].tid << 32 | p->rows[r].chan,
				  (uint32_t)r);
	fill = calloc(p->nrows, sizeof(*fill));
	if (err || !fill) {
		err = err ? err : -ENOMEM;
		goto out;
	}
	for (size_t r = 0, at = 0; r < p->nrows; r++) {
		p->rows[r].first = at;
		at += p->rows[r].n;
	}
	for (size_t i = 0; i < t->n; i++) {
		uint32_t r;
		tc_hmap_get(&rows, (uint64_t)t->items[i].tid << 32 | t->items[i].chan, &r);
		p->row_of[i] = r;
		p->pos_of[i] = fill[r];
		p->order[p->rows[r].first + fill[r]++] = i;
	}
out:
	free(fill);
	tc_hmap_exit(&threads);
	tc_hmap_exit(&rows);
	return err;
}

static const char *row_kind(uint32_t kind)
{
	switch (kind) {
	case TC_TL_BEGIN: case TC_TL_END: return "span";
	case TC_TL_COUNTER: return "counter";
	case TC_TL_EVENT: return "event";
	default: return "mark";
	}
}

/* A row of spans: each begin with its end (the innermost open one), its nesting and
 * whether the trace ended first (then it lasts to the trace's end). */
static int span_row(const struct page *p, const struct hrow *r, struct tc_json *j)
{
	const struct tacho_timeline *t = p->t;
	uint64_t t0 = t->items[0].time, last = t->items[t->n - 1].time;
	size_t stack[SPAN_DEPTH], depth = 0, nb = 0;
	uint64_t *begin = calloc(r->n + 1, sizeof(*begin)), *dur = calloc(r->n + 1, sizeof(*dur));
	unsigned char *level = calloc(r->n + 1, 1), *open = calloc(r->n + 1, 1);
	int err = begin && dur && level && open ? 0 : -ENOMEM;

	for (size_t k = 0; k < r->n && !err; k++) {
		const struct tc_tl_item *it = &t->items[p->order[r->first + k]];
		if (it->kind == TC_TL_BEGIN) {
			begin[nb] = it->time;
			dur[nb] = last - it->time;
			level[nb] = (unsigned char)(depth < LEVELS ? depth : LEVELS - 1);
			open[nb] = 1;
			if (depth < SPAN_DEPTH)
				stack[depth] = nb;
			depth++;
			nb++;
		} else if (it->kind == TC_TL_END && depth) {
			/* an end with no begin before it (the trace began inside the span)
			 * has no bar */
			depth--;
			if (depth < SPAN_DEPTH) {
				dur[stack[depth]] = it->time - begin[stack[depth]];
				open[stack[depth]] = 0;
			}
		}
	}
	if (!err) {
		tc_json_arr_begin(j, "t");
		for (size_t k = 0; k < nb; k++)
			tc_json_uint(j, NULL, begin[k] - t0);
		tc_json_arr_end(j);
		tc_json_arr_begin(j, "d");
		for (size_t k = 0; k < nb; k++)
			tc_json_uint(j, NULL, dur[k]);
		tc_json_arr_end(j);
		tc_json_arr_begin(j, "level");
		for (size_t k = 0; k < nb; k++)
			tc_json_uint(j, NULL, level[k]);
		tc_json_arr_end(j);
		tc_json_arr_begin(j, "open");
		for (size_t k = 0; k < nb; k++)
			tc_json_uint(j, NULL, open[k]);
		tc_json_arr_end(j);
	}
	free(begin);
	free(dur);
	free(level);
	free(open);
	return err;
}

/* The other rows: each item's time, and its value (marks, counters) or CPU (events). */
static void item_row(const struct page *p, const struct hrow *r, struct tc_json *j)
{
	const struct tacho_timeline *t = p->t;
	bool event = t->ch[r->chan].kind == TC_TL_EVENT;

	tc_json_arr_begin(j, "t");
	for (size_t k = 0; k < r->n; k++)
		tc_json_uint(j, NULL, t->items[p->order[r->first + k]].time - t->items[0].time);
	tc_json_arr_end(j);
	tc_json_arr_begin(j, event ? "cpu" : "v");
	for (size_t k = 0; k < r->n; k++) {
		const struct tc_tl_item *it = &t->items[p->order[r->first + k]];
		if (event)
			tc_json_int(j, NULL, it->cpu == UINT32_MAX ? -1 : (int64_t)it->cpu);
		else
			tc_json_uint(j, NULL, it->value);
	}
	tc_json_arr_end(j);
}

/* The page's data: counts, threads, rows, the hand-offs' arrows (a wake-up's ends on the
 * task that leaves the CPU, no row of the woken thread: the Chrome view draws those). */
static int page_data(struct page *p, FILE *f)
{
	const struct tacho_timeline *t = p->t;
	struct tc_tl_flow *flows = NULL;
	size_t nflows = 0;
	struct tc_json j;
	int err = tc_timeline_flows(t, &flows, &nflows);

	if (err)
		return err;
	tc_json_init(&j, f, false);
	tc_json_hold(&j);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "items", t->n);
	tc_json_uint(&j, "span_ns", t->n ? t->items[t->n - 1].time - t->items[0].time : 0);
	tc_json_arr_begin(&j, "threads");
	for (size_t i = 0; i < p->nth; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "pid", p->th[i].pid);
		tc_json_uint(&j, "tid", p->th[i].tid);
		tc_json_str(&j, "comm", p->th[i].comm[0] ? p->th[i].comm : "?");
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "rows");
	for (size_t r = 0; r < p->nrows && !err; r++) {
		const struct hrow *rw = &p->rows[r];
		uint32_t kind = t->ch[rw->chan].kind;

		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "thread", rw->thread);
		tc_json_str(&j, "channel", t->ch[rw->chan].name);
		tc_json_str(&j, "kind", row_kind(kind));
		if (kind == TC_TL_BEGIN || kind == TC_TL_END)
			err = span_row(p, rw, &j);
		else
			item_row(p, rw, &j);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "flows");
	for (size_t i = 0; i < nflows; i++) {
		if (flows[i].kind != TC_TL_FLOW_HANDOFF)
			continue;
		tc_json_arr_begin(&j, NULL);
		tc_json_uint(&j, NULL, p->row_of[flows[i].from]);
		tc_json_uint(&j, NULL, p->pos_of[flows[i].from]);
		tc_json_uint(&j, NULL, p->row_of[flows[i].to]);
		tc_json_uint(&j, NULL, p->pos_of[flows[i].to]);
		tc_json_arr_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	free(flows);
	int jerr = tc_json_finish(&j);
	return err ? err : jerr;
}

/* Text into the page: in a <script> block, "</" would end it, so every '<' (which JSON
 * has only inside strings) becomes \u003c; in HTML text, the five entities. */
static void put_script_safe(const char *s, size_t len, FILE *f)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(s[i], f);
}

static void put_html(const char *s, FILE *f)
{
	for (; *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
}

int tacho_timeline_write_html(const struct tacho_timeline *t, FILE *f)
{
	struct page p = { .t = t };
	char *data = NULL, span[32];
	size_t len = 0;
	FILE *m;
	int err;

	if (!t || !f)
		return -EINVAL;
	err = page_rows(&p);
	if (err)
		goto out;
	m = open_memstream(&data, &len);
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	err = page_data(&p, m);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (err)
		goto out;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<title>tacho trace: %zu items</title>\n<style>\n"
		"body { font: 13px sans-serif; margin: 8px; }\n"
		"#view { display: block; cursor: grab; }\n"
		"#tip { position: absolute; display: none; white-space: pre; background: #ffffe8; "
		"border: 1px solid #999; padding: 4px 6px; font: 12px monospace; "
		"pointer-events: none; }\n"
		"pre { margin: 4px 0; color: #a3432b; }\n</style>\n</head>\n<body>\n", t->n);
	fprintf(f, "<p>tacho trace: %zu items, %zu threads, %zu rows over %s; <span id=\"range\">"
		"</span>. Zoom: wheel, + and -; pan: drag, arrow keys; 0: all; point at an item "
		"to read it.</p>\n", t->n, p.nth, p.nrows,
		tc_tl_fmt_ns(t->n ? (double)(t->items[t->n - 1].time - t->items[0].time) : 0,
			     span, sizeof(span)));
	if (t->notes.len) {
		fputs("<pre>", f);
		put_html(t->notes.buf, f);
		fputs("</pre>\n", f);
	}
	fputs("<canvas id=\"view\"></canvas>\n<div id=\"tip\"></div>\n"
	      "<script type=\"application/json\" id=\"trace-data\">", f);
	put_script_safe(data, len, f);
	fputs("</script>\n<script>\n", f);
	fputs(view_js, f);
	fputs("</script>\n</body>\n</html>\n", f);
	err = tc_write_status(f);
out:
	free(data);
	free(p.th);
	free(p.rows);
	free(p.order);
	free(p.row_of);
	free(p.pos_of);
	return err;
}
