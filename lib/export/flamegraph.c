/* flamegraph.c - `report --format svg`: the selected event's stacks as a flame graph in
 * one self-contained SVG (its own script: click to zoom, reset, search), widths by the
 * samples' periods, colours by binary. Written here rather than through FlameGraph's
 * perl, which Debian 12 does not package. The drawing takes any tree of frames
 * (tc_fg_draw, flamegraph.h), so that `diff --format svg` draws through it too. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/flamegraph.h"
#include "report/report-int.h"
#include "util/util.h"
#include "tacho/report.h"

#define FG_WIDTH 1200.0        /* pixels */
#define FG_PAD 10.0
#define FG_FRAME 16.0          /* height of a frame */
#define FG_TOP 36.0            /* the title and the buttons */
#define FG_BOTTOM 24.0         /* the details line */
#define FG_MIN 0.1             /* frames narrower than this many pixels are left out */

enum { KIND_COMM, KIND_USER, KIND_KERNEL, KIND_VDSO, KIND_UNKNOWN };

struct node {
	uint32_t name, dso;            /* pool ids (dso NONE for the process's frame) */
	uint32_t parent, first, next;          /* first child, next sibling (0: none) */
	uint64_t value;                /* the periods of the samples under it */
	uint16_t depth;                /* the root's is 0 */
	uint8_t kind;
};

struct fg {
	struct tacho_profile *p;
	struct node *v;
	size_t n, cap;
	struct tc_hmap idx;            /* (parent, name, dso) -> child */
};

static uint64_t child_key(uint32_t parent, uint32_t name, uint32_t dso)
{
	return tc_hash_u64(((uint64_t)parent << 32) ^ name) ^ tc_hash_u64(dso + 0x51ull);
}

/* The child of parent with this name and binary, made when new. 0 and *out, -ENOMEM. */
static int child_of(struct fg *g, uint32_t parent, uint32_t name, uint32_t dso, uint8_t kind,
		    uint32_t *out)
{
	uint64_t key = child_key(parent, name, dso);
	size_t pos = 0;
	uint32_t i;

	/* the key is a hash: confirm the whole of it */
	while (tc_hmap_next(&g->idx, key, &pos, &i))
		if (g->v[i].parent == parent && g->v[i].name == name && g->v[i].dso == dso) {
			*out = i;
			return 0;
		}
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 1024;
		struct node *nv = realloc(g->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		g->v = nv;
		g->cap = nc;
	}
	i = (uint32_t)g->n;
	g->v[i] = (struct node){ .name = name, .dso = dso, .parent = parent,
				 .next = g->v[parent].first, .depth = (uint16_t)(g->v[parent].depth + 1),
				 .kind = kind };
	if (tc_hmap_add(&g->idx, key, i))
		return -ENOMEM;
	g->v[parent].first = i;
	g->n++;
	*out = i;
	return 0;
}

static uint8_t kind_of(const struct tacho_profile *p, const struct loc *l)
{
	const char *dso = pool_str(p, l->dso);

	if (l->dso == p->kernel_id)
		return KIND_KERNEL;
	if (dso && !strcmp(dso, "[vdso]"))
		return KIND_VDSO;
	if (l->dso == p->unknown_id || l->sym == NONE)
		return KIND_UNKNOWN;
	return KIND_USER;
}

static int build(struct fg *g)
{
	struct tacho_profile *p = g->p;
	uint32_t frames[MAX_FRAMES], unknown;
	int err;

	g->v = calloc(1024, sizeof(*g->v));
	if (!g->v)
		return -ENOMEM;
	g->cap = 1024;
	g->n = 1;   /* the root, "all" */
	if (tc_strpool_intern(&p->pool, "[unknown]", &unknown))
		return -ENOMEM;
	g->v[0].name = NONE;
	for (size_t i = 0; i < p->nsmps; i++) {
		const struct smp *s = &p->smps[i];
		struct proc *pr;
		uint32_t at = 0;
		size_t nf;
		int keep = tc_profile_keep(p, s);   /* the event and the filter */

		if (keep < 0)
			return keep;
		if (!keep)
			continue;
		err = tc_profile_chain(p, s, frames, MAX_FRAMES, &nf);
		if (err)
			return err;
		g->v[0].value += tc_smp_period(p, s);
		pr = tc_profile_proc(p, tc_smp_pid(p, s), false);
		err = child_of(g, 0, pr && pr->comm != NONE ? pr->comm : unknown, NONE, KIND_COMM,
			       &at);
		if (err)
			return err;
		g->v[at].value += tc_smp_period(p, s);
		for (size_t k = nf; k-- > 0;) {
			const struct loc *l = &p->locs[frames[k]];
			err = child_of(g, at, l->sym != NONE ? l->sym : unknown, l->dso,
				       kind_of(p, l), &at);
			if (err)
				return err;
			g->v[at].value += tc_smp_period(p, s);
		}
	}
	return 0;
}

int tc_profile_each_stack(struct tacho_profile *p,
			  int (*fn)(void *arg, const struct tc_fg_loc *locs, size_t n,
				    uint64_t period),
			  void *arg)
{
	uint32_t frames[MAX_FRAMES];
	struct tc_fg_loc *locs = malloc((MAX_FRAMES + 1) * sizeof(*locs));
	int err = locs ? 0 : -ENOMEM;

	for (size_t i = 0; i < p->nsmps && !err; i++) {
		const struct smp *s = &p->smps[i];
		struct proc *pr;
		size_t nf, n = 0;
		int keep = tc_profile_keep(p, s);   /* the event and the filter */

		if (keep <= 0) {
			err = keep;
			continue;
		}
		err = tc_profile_chain(p, s, frames, MAX_FRAMES, &nf);
		if (err)
			break;
		pr = tc_profile_proc(p, tc_smp_pid(p, s), false);
		locs[n++] = (struct tc_fg_loc){
			.name = pr && pr->comm != NONE ? pool_str(p, pr->comm) : "[unknown]" };
		for (size_t k = nf; k-- > 0;) {
			const struct loc *l = &p->locs[frames[k]];

			locs[n++] = (struct tc_fg_loc){
				.name = l->sym != NONE ? pool_str(p, l->sym) : "[unknown]",
				.dso = l->dso != NONE && l->dso != p->unknown_id ? pool_str(p, l->dso) :
				       NULL };
		}
		err = fn(arg, locs, n, tc_smp_period(p, s));
	}
	free(locs);
	return err;
}

/* Text for an SVG document: XML's five escapes, control characters and bytes that are
 * not UTF-8 as '?' (an XML parser stops at either). */
void tc_fg_xml_put(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		unsigned need = *u >= 0xf0 && *u <= 0xf4 ? 3 : *u >= 0xe0 && *u <= 0xef ? 2 :
				*u >= 0xc2 && *u <= 0xdf ? 1 : 0;
		bool ok = true;

		if (*u < 0x80) {
			if (*u == '<')
				fputs("&lt;", f);
			else if (*u == '>')
				fputs("&gt;", f);
			else if (*u == '&')
				fputs("&amp;", f);
			else if (*u == '"')
				fputs("&quot;", f);
			else if (*u == '\'')
				fputs("&#39;", f);
			else
				fputc(*u < 0x20 ? '?' : *u, f);
			u++;
			continue;
		}
		for (unsigned k = 1; k <= need && ok; k++)
			ok = (u[k] & 0xc0) == 0x80;
		if (!need || !ok) {
			fputc('?', f);
			u++;
			continue;
		}
		fwrite(u, 1, need + 1, f);
		u += need + 1;
	}
}

/* A warm colour for user code, one hue per binary and a shade per function, as
 * FlameGraph's "hot" palette; fixed families for the kernel, the vDSO, unknown code and
 * the processes. */
static void colour(const struct tacho_profile *p, const struct node *n, char *buf, size_t size)
{
	const char *name = n->name != NONE ? pool_str(p, n->name) : "";
	const char *dso = n->dso != NONE && pool_str(p, n->dso) ? pool_str(p, n->dso) : "";
	unsigned hd = (unsigned)(tc_hash_str(dso) % 1000), hn = (unsigned)(tc_hash_str(name) % 1000);

	switch (n->kind) {
	case KIND_KERNEL:
		snprintf(buf, size, "rgb(%u,%u,%u)", 90 + hn % 40, 150 + hn % 50, 220 + hn % 30);
		break;
	case KIND_VDSO:
		snprintf(buf, size, "rgb(%u,%u,%u)", 110 + hn % 40, 200 + hn % 40, 110 + hn % 40);
		break;
	case KIND_UNKNOWN:
		snprintf(buf, size, "rgb(%u,%u,%u)", 175 + hn % 20, 175 + hn % 20, 175 + hn % 20);
		break;
	case KIND_COMM:
		snprintf(buf, size, "rgb(%u,%u,%u)", 200, 200, 225 + hn % 25);
		break;
	default:
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + hd % 50, 60 + (hd * 7 + hn) % 170,
			 hn % 55);
		break;
	}
}

/* What of name fits in w pixels at 7 a character, cut with "..": the script does the
 * same when it zooms. Not inlined: its buffer stays off emit's recursion. */
static __attribute__((noinline)) void put_label(FILE *f, const char *name, double w)
{
	int fit = (int)((w - 6) / 7);
	size_t len = strlen(name), k;
	char cut[512];

	if (fit < 3)
		return;
	if (len <= (size_t)fit) {
		tc_fg_xml_put(f, name);
		return;
	}
	k = (size_t)fit - 2 < sizeof(cut) - 3 ? (size_t)fit - 2 : sizeof(cut) - 3;
	/* not inside a UTF-8 sequence */
	while (k && ((unsigned char)name[k] & 0xc0) == 0x80)
		k--;
	memcpy(cut, name, k);
	memcpy(cut + k, "..", 3);
	tc_fg_xml_put(f, cut);
}

struct draw {
	const struct tc_fg_page *pg;
	FILE *f;
	uint32_t *start, *kids;        /* frame i's children: kids[start[i] .. start[i + 1]) */
	double scale;                  /* pixels per unit */
	double height;
};

static int kid_cmp(const void *ka, const void *kb, void *arg)
{
	const struct tc_fg_frame *v = arg;
	const struct tc_fg_frame *a = &v[*(const uint32_t *)ka], *b = &v[*(const uint32_t *)kb];
	int c = strcmp(a->name ? a->name : "", b->name ? b->name : "");

	return c ? c : strcmp(a->sub ? a->sub : "", b->sub ? b->sub : "");
}

/* The frame of i at x (in units from the left) and depth d, then its children in name
 * order (FlameGraph's: the order of the x axis means nothing, so that equal profiles
 * give equal pictures). */
static int emit(struct draw *e, uint32_t i, double x, unsigned d)
{
	const struct tc_fg_frame *n = &e->pg->v[i];
	double px = FG_PAD + x * e->scale, w = n->value * e->scale;
	double y = e->height - FG_BOTTOM - (d + 1) * FG_FRAME;
	const char *name = n->name ? n->name : "[unknown]";
	char fill[32];
	int err = 0;

	if (w < FG_MIN)
		return 0;
	e->pg->fill(e->pg->arg, i, fill, sizeof(fill));
	fprintf(e->f, "<g class=\"f\" data-x=\"%.3f\" data-w=\"%.3f\" data-d=\"%u\" data-n=\"", px,
		w, d);
	tc_fg_xml_put(e->f, name);
	fputs("\"><title>", e->f);
	e->pg->title(e->pg->arg, i, e->f);
	fputs("</title>", e->f);
	fprintf(e->f, "<rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%.1f\" fill=\"%s\" "
		"rx=\"2\"/>", px, y, w, FG_FRAME - 1, fill);
	fprintf(e->f, "<text x=\"%.3f\" y=\"%.1f\">", px + 3, y + FG_FRAME - 4.5);
	put_label(e->f, name, w);
	fputs("</text></g>\n", e->f);
	for (uint32_t k = e->start[i]; k < e->start[i + 1] && !err; k++) {
		err = emit(e, e->kids[k], x, d + 1);
		x += e->pg->v[e->kids[k]].value;
	}
	return err;
}

/* The page's behaviour: zoom (click a frame; "Reset zoom" or Escape), search ("Search"
 * or Ctrl-F: a regular expression; the share of the matching frames, counted once where
 * they nest), details of the frame under the pointer. "#zoom=NAME" and "#search=RE" in
 * the address do the same on load (how the test drives it). */
static const char script[] =
	"\"use strict\";\n"
	"(function () {\n"
	"var W = %g, PAD = %g;\n"
	"var frames = Array.prototype.slice.call(document.querySelectorAll(\"g.f\"));\n"
	"var details = document.getElementById(\"details\");\n"
	"var reset = document.getElementById(\"reset\");\n"
	"var search = document.getElementById(\"search\");\n"
	"var matched = document.getElementById(\"matched\");\n"
	"frames.forEach(function (g) {\n"
	"  g.fx = parseFloat(g.getAttribute(\"data-x\"));\n"
	"  g.fw = parseFloat(g.getAttribute(\"data-w\"));\n"
	"  g.fd = parseInt(g.getAttribute(\"data-d\"), 10);\n"
	"  g.fname = g.getAttribute(\"data-n\");\n"
	"  g.rect = g.querySelector(\"rect\");\n"
	"  g.label = g.querySelector(\"text\");\n"
	"  g.fill = g.rect.getAttribute(\"fill\");\n"
	"  g.addEventListener(\"click\", function () { zoom(g); });\n"
	"  g.addEventListener(\"mouseover\", function () {\n"
	"    details.textContent = g.querySelector(\"title\").textContent;\n"
	"  });\n"
	"  g.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
	"});\n"
	"function place(g, x, w) {\n"
	"  var fit = Math.floor((w - 6) / 7), n = g.fname;\n"
	"  g.rect.setAttribute(\"x\", x.toFixed(3));\n"
	"  g.rect.setAttribute(\"width\", w.toFixed(3));\n"
	"  g.label.setAttribute(\"x\", (x + 3).toFixed(3));\n"
	"  g.label.textContent = fit < 3 ? \"\" : n.length <= fit ? n : n.substring(0, fit - 2) + \"..\";\n"
	"}\n"
	"var eps = 1e-6;\n"
	"function zoom(z) {\n"
	"  var scale = (W - 2 * PAD) / z.fw;\n"
	"  frames.forEach(function (g) {\n"
	"    var inside = g.fx >= z.fx - eps && g.fx + g.fw <= z.fx + z.fw + eps;\n"
	"    var under = g.fx <= z.fx + eps && g.fx + g.fw >= z.fx + z.fw - eps;\n"
	"    if (g.fd >= z.fd && inside) {\n"
	"      g.style.display = \"\";\n"
	"      g.style.opacity = \"\";\n"
	"      place(g, PAD + (g.fx - z.fx) * scale, g.fw * scale);\n"
	"    } else if (g.fd < z.fd && under) {\n"
	"      g.style.display = \"\";\n"
	"      g.style.opacity = \"0.5\";\n"
	"      place(g, PAD, W - 2 * PAD);\n"
	"    } else {\n"
	"      g.style.display = \"none\";\n"
	"    }\n"
	"  });\n"
	"  reset.style.opacity = \"1\";\n"
	"}\n"
	"function unzoom() {\n"
	"  frames.forEach(function (g) {\n"
	"    g.style.display = \"\";\n"
	"    g.style.opacity = \"\";\n"
	"    place(g, g.fx, g.fw);\n"
	"  });\n"
	"  reset.style.opacity = \"0\";\n"
	"}\n"
	"function find(term) {\n"
	"  var re = null, spans = [], sum = 0, end = -1;\n"
	"  if (term) {\n"
	"    try { re = new RegExp(term); } catch (e) { matched.textContent = \"not a regular expression\"; return; }\n"
	"  }\n"
	"  frames.forEach(function (g) {\n"
	"    var hit = re !== null && g.fd > 0 && re.test(g.fname);\n"
	"    g.rect.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : g.fill);\n"
	"    if (hit) spans.push([g.fx, g.fx + g.fw]);\n"
	"  });\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  spans.forEach(function (s) {\n"
	"    if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }\n"
	"    else if (s[1] > end) { sum += s[1] - end; end = s[1]; }\n"
	"  });\n"
	"  matched.textContent = re === null ? \"\" : \"Matched: \" + (100 * sum / (W - 2 * PAD)).toFixed(1) + \"%%\";\n"
	"}\n"
	"reset.addEventListener(\"click\", unzoom);\n"
	"search.addEventListener(\"click\", function () {\n"
	"  var term = window.prompt(\"Search for (a regular expression):\", \"\");\n"
	"  if (term !== null) find(term);\n"
	"});\n"
	"document.addEventListener(\"keydown\", function (e) {\n"
	"  if ((e.ctrlKey || e.metaKey) && e.key === \"f\") {\n"
	"    e.preventDefault();\n"
	"    search.dispatchEvent(new Event(\"click\"));\n"
	"  } else if (e.key === \"Escape\") {\n"
	"    unzoom();\n"
	"    find(\"\");\n"
	"  }\n"
	"});\n"
	"location.hash.replace(/^#/, \"\").split(\"&\").forEach(function (kv) {\n"
	"  var i = kv.indexOf(\"=\"), k = kv.substring(0, i), v = decodeURIComponent(kv.substring(i + 1));\n"
	"  if (k === \"search\") find(v);\n"
	"  if (k === \"zoom\") {\n"
	"    var z = frames.filter(function (g) { return g.fname === v; })[0];\n"
	"    if (z) zoom(z);\n"
	"  }\n"
	"});\n"
	"})();\n";

int tc_fg_draw(FILE *f, const struct tc_fg_page *pg)
{
	const struct tc_fg_frame *v = pg->v;
	struct draw e = { .pg = pg, .f = f };
	unsigned *depth = NULL, deepest = 0;
	uint32_t *fill = NULL;
	double total = pg->n ? v[0].value : 0;
	int err = 0;

	for (size_t i = 1; i < pg->n; i++)
		if (v[i].parent >= i)
			return -EINVAL;
	/* the children in one array, each frame's together, in name order */
	e.start = calloc(pg->n + 1, sizeof(*e.start));
	e.kids = malloc((pg->n ? pg->n : 1) * sizeof(*e.kids));
	fill = calloc(pg->n + 1, sizeof(*fill));
	depth = calloc(pg->n ? pg->n : 1, sizeof(*depth));
	if (!e.start || !e.kids || !fill || !depth) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 1; i < pg->n; i++)
		e.start[v[i].parent + 1]++;
	for (size_t i = 0; i < pg->n; i++)
		e.start[i + 1] += e.start[i];
	for (size_t i = 1; i < pg->n; i++)
		e.kids[e.start[v[i].parent] + fill[v[i].parent]++] = (uint32_t)i;
	for (size_t i = 0; i < pg->n; i++)
		if (e.start[i + 1] - e.start[i] > 1)
			qsort_r(e.kids + e.start[i], e.start[i + 1] - e.start[i], sizeof(*e.kids),
				kid_cmp, (void *)v);
	e.scale = total > 0 ? (FG_WIDTH - 2 * FG_PAD) / total : 0;
	/* as high as the deepest frame drawn (a parent is never narrower than its child) */
	for (size_t i = 1; i < pg->n; i++) {
		depth[i] = depth[v[i].parent] + 1;
		if (v[i].value * e.scale >= FG_MIN && depth[i] > deepest)
			deepest = depth[i];
	}
	e.height = FG_TOP + (deepest + 1) * FG_FRAME + FG_BOTTOM;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", FG_WIDTH, e.height, FG_WIDTH, e.height);
	fputs("<style>text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	      "g.f { cursor: pointer; } g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      "#reset, #search { cursor: pointer; fill: #336; }</style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" fill=\"#f6f6f6\"/>\n",
		FG_WIDTH, e.height);
	fprintf(f, "<text x=\"%g\" y=\"22\" text-anchor=\"middle\" style=\"font-size: 15px\">",
		FG_WIDTH / 2);
	tc_fg_xml_put(f, pg->heading ? pg->heading : "Flame graph");
	fputs("</text>\n", f);
	fprintf(f, "<text id=\"reset\" x=\"%g\" y=\"22\" style=\"opacity: 0\">Reset zoom</text>\n",
		FG_PAD);
	fprintf(f, "<text id=\"search\" x=\"%g\" y=\"22\" text-anchor=\"end\">Search</text>\n",
		FG_WIDTH - FG_PAD);
	fprintf(f, "<text id=\"details\" x=\"%g\" y=\"%g\"> </text>\n", FG_PAD, e.height - 8);
	fprintf(f, "<text id=\"matched\" x=\"%g\" y=\"%g\" text-anchor=\"end\"></text>\n",
		FG_WIDTH - FG_PAD, e.height - 8);
	fputs("<g id=\"frames\">\n", f);
	if (total > 0)
		err = emit(&e, 0, 0, 0);
	fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fprintf(f, script, FG_WIDTH, FG_PAD);
	fputs("]]></script>\n</svg>\n", f);
	if (!err && ferror(f))
		err = -EIO;
out:
	free(e.start);
	free(e.kids);
	free(fill);
	free(depth);
	return err;
}

/* One profile's tree as flamegraph.h's frames, with its callbacks' context. */
struct one {
	struct fg *g;
	uint64_t total;
};

static void one_fill(void *arg, uint32_t i, char *buf, size_t size)
{
	const struct one *o = arg;

	colour(o->g->p, &o->g->v[i], buf, size);
}

static void one_title(void *arg, uint32_t i, FILE *f)
{
	const struct one *o = arg;
	const struct tacho_profile *p = o->g->p;
	const struct node *n = &o->g->v[i];
	const char *dso = n->dso != NONE && pool_str(p, n->dso) ? pool_str(p, n->dso) : NULL;

	tc_fg_xml_put(f, i == 0 ? "all" : n->name != NONE ? pool_str(p, n->name) : "[unknown]");
	if (dso && n->kind != KIND_KERNEL) {
		fputs(" (", f);
		tc_fg_xml_put(f, dso);
		fputc(')', f);
	}
	fprintf(f, ": %" PRIu64 " %s, %.2f%%", n->value,
		tc_profile_offcpu(p) ? "ns blocked" : "events",
		o->total ? 100.0 * (double)n->value / (double)o->total : 0);
}

int tacho_profile_write_flamegraph(struct tacho_profile *p, FILE *f)
{
	struct fg g = { .p = p };
	struct one o = { .g = &g };
	struct tc_fg_frame *v = NULL;
	struct tc_fg_page pg = { .fill = one_fill, .title = one_title, .arg = &o };
	char *heading = NULL;
	size_t hsize = 0;
	FILE *h;
	const char *ev;
	int err;

	if (!p || !f)
		return -EINVAL;
	err = build(&g);
	if (err)
		goto out;
	o.total = g.v[0].value;
	v = malloc(g.n * sizeof(*v));
	h = open_memstream(&heading, &hsize);
	if (!v || !h) {
		if (h)
			fclose(h);
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < g.n; i++)
		v[i] = (struct tc_fg_frame){
			.name = i == 0 ? "all" : g.v[i].name != NONE ? pool_str(p, g.v[i].name) :
			       "[unknown]",
			.sub = g.v[i].dso != NONE ? pool_str(p, g.v[i].dso) : NULL,
			.parent = g.v[i].parent, .value = (double)g.v[i].value };
	ev = p->sel < p->nev ? pool_str(p, p->evs[p->sel].name) : "events";
	fprintf(h, "Flame graph: %s", ev);
	if (tc_profile_simulated(p))
		fprintf(h, ", %" PRIu64 " simulated (exact counts, no sampling)", p->sel_events);
	else if (tc_profile_offcpu(p))
		fprintf(h, ", %" PRIu64 " ns blocked in %" PRIu64 " waits", p->sel_events,
			p->sel_samples);
	else
		fprintf(h, ", %" PRIu64 " samples", p->sel_samples);
	if (p->command)
		fprintf(h, " of %s", p->command);
	if (fclose(h)) {
		err = -ENOMEM;
		goto out;
	}
	pg.heading = heading;
	pg.v = v;
	pg.n = g.n;
	err = tc_fg_draw(f, &pg);
out:
	free(heading);
	free(v);
	free(g.v);
	tc_hmap_exit(&g.idx);
	return err;
}
