/* cmd-list.c - `tacho list`: the events this machine's CPU and kernel offer, grouped by
 * where they come from, and whether this process may open each one here. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "output/output.h"
#include "util/util.h"

static const char list_help[] =
	"usage: tacho list [<pattern>] [--source <src>[,<src>...]] [--json] [--no-probe]\n"
	"\n"
	"Lists the events this machine's CPU and kernel offer, grouped by where they come\n"
	"from, with a description and whether this process can open each one here (tacho\n"
	"tries to open it counting on itself, then closes it; nothing is cached). When an\n"
	"event cannot be opened, a note under its group says why.\n"
	"\n"
	"Sources, in the order listed:\n"
	"    hardware     the kernel's generic hardware events (cycles, instructions, ...)\n"
	"    cache        the generic cache events (L1-dcache-load-misses, LLC-loads, ...)\n"
	"    software     the kernel's software events (task-clock, page-faults, ...)\n"
	"    pfm          CPU-specific events libpfm4 knows for this CPU's active PMUs\n"
	"    raw          the rNNNN syntax\n"
	"    pmu          other PMUs in /sys/bus/event_source/devices: their terms and events\n"
	"    tracepoint   kernel tracepoints; without a pattern or --source tracepoint,\n"
	"                 one line per subsystem\n"
	"    breakpoint   the mem:ADDR[/LEN][:rwx] syntax\n"
	"\n"
	"<pattern> selects events by name (and alias): a glob when it has * ? or [,\n"
	"else a case-insensitive substring.\n"
	"\n"
	"options:\n"
	"    --source <src>   only these sources (comma-separated names from above)\n"
	"    --json           one JSON document with every selected event (docs/list.md)\n"
	"    --no-probe       do not try to open the events\n"
	"    -h, --help       this text\n"
	"\n"
	"docs/events.md describes how to write events; docs/list.md this command.\n"
	"\n"
	"exit status: 0 listed (even if nothing matched), 2 bad usage\n";

struct row {
	enum tacho_event_source src;
	char *name, *aliases, *desc, *pmu;
	char *spec;       /* the probe spec, kept for tracepoints (probed after the walk) */
	bool probed;      /* a probe spec existed and was tried */
	int err;          /* 0 when it opened, else -errno (or a parse error) */
	int why;          /* index into the explanations, -1 when none */
	char *msg;        /* why its spec did not parse, when it did not */
	int err_u;        /* after EACCES: 0 if it opens with ':u', -errno if not, 1 untried */
};

struct expl {
	enum tacho_event_source src;
	int err;
	char text[512];
};

struct list_ctx {
	const char *pattern;
	bool glob;
	bool probe;
	struct row *rows;
	size_t n, alloc;
	struct expl *ex;
	size_t nex, allocex;
	bool oom;
	size_t tp_rep;   /* the tracepoint probed for all, or SIZE_MAX */
	bool tp_wanted;  /* the tracepoint source was asked for */
};

/* Closing a tracepoint event costs the kernel an RCU grace period (about 40 ms on
 * this machine: 2,323 tracepoints took 93 s), and the kernel checks the same rules
 * for every tracepoint; so tacho opens each tracepoint only when a pattern selects
 * at most this many, and otherwise one, whose result it reports for all. */
#define TP_PROBE_EACH 10

static bool matches(const struct list_ctx *c, const char *s)
{
	if (!c->pattern)
		return true;
	if (c->glob)
		return fnmatch(c->pattern, s, 0) == 0;
	return strcasestr(s, c->pattern) != NULL;
}

static bool row_matches(const struct list_ctx *c, const struct tacho_event_info *ev)
{
	char buf[512];
	const char *a = ev->aliases;

	if (matches(c, ev->name))
		return true;
	while (a && *a) {
		const char *comma = strchr(a, ',');
		size_t n = comma ? (size_t)(comma - a) : strlen(a);
		snprintf(buf, sizeof(buf), "%.*s", (int)n, a);
		if (matches(c, buf))
			return true;
		a = comma ? comma + 1 : NULL;
	}
	return false;
}

/* Finds or adds the explanation of (source, err); the explainer reads the machine's
 * state, so it runs once per distinct pair, not once per event. */
static int explanation(struct list_ctx *c, enum tacho_event_source src, int err,
		       const struct perf_event_attr *attr)
{
	for (size_t i = 0; i < c->nex; i++)
		if (c->ex[i].src == src && c->ex[i].err == err)
			return (int)i;
	if (c->nex == c->allocex) {
		size_t na = c->allocex ? 2 * c->allocex : 8;
		struct expl *ne = realloc(c->ex, na * sizeof(*ne));
		if (!ne) {
			c->oom = true;
			return -1;
		}
		c->ex = ne;
		c->allocex = na;
	}
	c->ex[c->nex].src = src;
	c->ex[c->nex].err = err;
	{
		char why[sizeof(c->ex[0].text)];
		enum tacho_hint hint;

		tacho_perf_strerror(err, attr, why, sizeof(why), &hint);
		snprintf(c->ex[c->nex].text, sizeof(c->ex[c->nex].text), "%s", cli_hinted(why, hint));
	}
	return (int)c->nex++;
}

static int probe_user_only(const char *spec)
{
	struct tacho_evlist *l;
	struct tacho_diag d;
	char buf[700];
	int err;

	snprintf(buf, sizeof(buf), "%s:u", spec);
	err = tacho_evlist_parse(buf, &l, &d);
	if (err)
		return err;
	err = tacho_evlist_probe(l, 0);
	tacho_evlist_free(l);
	return err;
}

static void probe_row(struct list_ctx *c, struct row *r, const char *spec)
{
	struct tacho_evlist *l;
	struct tacho_diag d;
	struct perf_event_attr attr;

	if (!spec || !c->probe)
		return;
	r->probed = true;
	r->err = tacho_evlist_parse(spec, &l, &d);
	if (r->err) {
		r->msg = tc_strdup(d.message);
		return;
	}
	r->err = tacho_evlist_probe(l, 0);
	if (r->err && tacho_evlist_attr(l, 0, &attr) == 0) {
		r->why = explanation(c, r->src, r->err, &attr);
		/* a user who may count user space only: does the ':u' form open? */
		if (r->err == -EACCES && !attr.exclude_kernel)
			r->err_u = probe_user_only(spec);
	}
	tacho_evlist_free(l);
}

static int collect(void *arg, const struct tacho_event_info *ev)
{
	struct list_ctx *c = arg;
	struct row *r;

	if (!row_matches(c, ev))
		return 0;
	if (c->n == c->alloc) {
		size_t na = c->alloc ? 2 * c->alloc : 256;
		struct row *nr = realloc(c->rows, na * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		c->rows = nr;
		c->alloc = na;
	}
	r = &c->rows[c->n];
	memset(r, 0, sizeof(*r));
	r->src = ev->source;
	r->name = tc_strdup(ev->name);
	r->aliases = tc_strdup(ev->aliases);
	r->desc = tc_strdup(ev->desc);
	r->pmu = tc_strdup(ev->pmu);
	r->spec = tc_strdup(ev->probe);
	r->why = -1;
	r->err_u = 1;
	if (!r->name || !r->aliases || !r->desc || !r->pmu || (ev->probe && !r->spec)) {
		free(r->name);
		free(r->aliases);
		free(r->desc);
		free(r->pmu);
		free(r->spec);
		return -ENOMEM;
	}
	c->n++;
	if (ev->source != TACHO_EVENT_SRC_TRACEPOINT)
		probe_row(c, r, r->spec);
	return 0;
}

static void probe_tracepoints(struct list_ctx *c)
{
	size_t ntp = 0, rep = SIZE_MAX;

	for (size_t i = 0; i < c->n; i++) {
		if (c->rows[i].src != TACHO_EVENT_SRC_TRACEPOINT)
			continue;
		ntp++;
		if (rep == SIZE_MAX || !strcmp(c->rows[i].name, "sched:sched_switch"))
			rep = i;
	}
	if (ntp <= TP_PROBE_EACH) {
		for (size_t i = 0; i < c->n; i++)
			if (c->rows[i].src == TACHO_EVENT_SRC_TRACEPOINT)
				probe_row(c, &c->rows[i], c->rows[i].spec);
	} else if (rep != SIZE_MAX) {
		probe_row(c, &c->rows[rep], c->rows[rep].spec);
		c->tp_rep = rep;
	}
}

static const char *const headings[] = {
	[TACHO_EVENT_SRC_HARDWARE] = "generic hardware events (kernel)",
	[TACHO_EVENT_SRC_CACHE] = "generic cache events (kernel)",
	[TACHO_EVENT_SRC_SOFTWARE] = "software events (kernel)",
	[TACHO_EVENT_SRC_PFM] = "CPU-specific events (libpfm4, this CPU's active PMUs)",
	[TACHO_EVENT_SRC_RAW] = "raw events",
	[TACHO_EVENT_SRC_PMU] = "other PMUs (/sys/bus/event_source/devices)",
	[TACHO_EVENT_SRC_TRACEPOINT] = "tracepoints (tracefs)",
	[TACHO_EVENT_SRC_BREAKPOINT] = "breakpoints and probes",
};

static const char *status_word(const struct row *r, char *buf, size_t size)
{
	if (!r->probed)
		return "";
	if (!r->err)
		return "yes";
	if (r->err_u == 0)
		return "only :u";
	snprintf(buf, size, "no (%s)", tacho_err_name(r->err) ? tacho_err_name(r->err) : "?");
	return buf;
}

/* Notes under a group: why its events could not be opened, once per reason. */
static void print_notes(const struct list_ctx *c, size_t from, size_t to)
{
	for (size_t e = 0; e < c->nex; e++) {
		size_t count = 0;
		for (size_t i = from; i < to; i++)
			if (c->rows[i].why == (int)e)
				count++;
		if (count)
			printf("    %s: %s\n", tacho_err_name(c->ex[e].err) ? tacho_err_name(c->ex[e].err)
									: "error", c->ex[e].text);
	}
	for (size_t i = from; i < to; i++)
		if (c->rows[i].msg)
			printf("    %s: %s\n", c->rows[i].name, c->rows[i].msg);
}

/* Tracepoints without a filter: one line per subsystem. */
static void add_subsystem_row(struct tc_table *t, const struct list_ctx *c, size_t from, size_t to)
{
	size_t ok = 0, probed = 0;
	char name[300], n1[48], st[64];

	for (size_t i = from; i < to; i++) {
		probed += c->rows[i].probed;
		ok += c->rows[i].probed && !c->rows[i].err;
	}
	snprintf(name, sizeof(name), "%s:*", c->rows[from].pmu);
	snprintf(n1, sizeof(n1), "%zu tracepoint%s", to - from, to - from == 1 ? "" : "s");
	if (!probed || c->tp_rep != SIZE_MAX)
		st[0] = '\0';
	else if (ok == probed)
		snprintf(st, sizeof(st), "yes");
	else
		snprintf(st, sizeof(st), "%zu of %zu", ok, probed);
	tc_table_add(t, (const char *const[]){ name, st, n1 });
}

/* The first sentence of a description, at most 100 characters, for the text view
 * (libpfm4's descriptions run to paragraphs; --json has them whole). */
static const char *short_desc(const char *d, char *buf, size_t size)
{
	size_t n = strcspn(d, "\n");
	const char *stop = strstr(d, ". ");

	if (stop && (size_t)(stop - d) < n)
		n = (size_t)(stop - d);
	if (n > 100)
		snprintf(buf, size, "%.97s...", d);
	else
		snprintf(buf, size, "%.*s", (int)n, d);
	return buf;
}

/* Tracepoints were asked for but none was found: say why rather than leave the group
 * out silently. True when it printed. */
static bool no_tracefs_note(const struct list_ctx *c, bool any)
{
	if (!c->tp_wanted || c->pattern || tacho_event_tracefs(NULL))
		return false;
	printf("%stracepoints (tracefs):\n    none: no tracefs this user can read (see "
	       "'tacho doctor')\n", any ? "\n" : "");
	return true;
}

static void print_text(const struct list_ctx *c, bool tp_grouped)
{
	size_t i = 0;
	bool any = false, tp_seen = false;

	while (i < c->n) {
		enum tacho_event_source src = c->rows[i].src;
		size_t j = i;
		struct tc_table *t = tc_table_new(3);
		char label[600], st[64], desc[128];

		while (j < c->n && c->rows[j].src == src)
			j++;
		if (src > TACHO_EVENT_SRC_TRACEPOINT && !tp_seen)
			any |= no_tracefs_note(c, any);
		tp_seen |= src >= TACHO_EVENT_SRC_TRACEPOINT;
		if (!t) {
			cli_error("cannot list events: out of memory");
			return;
		}
		printf("%s%s:\n", any ? "\n" : "", (unsigned)src < ARRAY_SIZE(headings) ?
		       headings[src] : "other");
		any = true;
		if (src == TACHO_EVENT_SRC_TRACEPOINT && tp_grouped) {
			for (size_t k = i; k < j;) {
				size_t m = k;
				while (m < j && !strcmp(c->rows[m].pmu, c->rows[k].pmu))
					m++;
				add_subsystem_row(t, c, k, m);
				k = m;
			}
		} else {
			for (size_t k = i; k < j; k++) {
				const struct row *r = &c->rows[k];
				if (r->aliases[0])
					snprintf(label, sizeof(label), "%s (%s)", r->name, r->aliases);
				else
					snprintf(label, sizeof(label), "%s", r->name);
				tc_table_add(t, (const char *const[]){ label, status_word(r, st, sizeof(st)),
						short_desc(r->desc, desc, sizeof(desc)) });
			}
		}
		tc_table_print(t, stdout, 4, 2);
		tc_table_free(t);
		if (src == TACHO_EVENT_SRC_TRACEPOINT && c->tp_rep != SIZE_MAX) {
			const struct row *r = &c->rows[c->tp_rep];
			printf("    opened one, %s: %s; the others were not tried (closing a "
			       "tracepoint costs\n    the kernel a grace period; a pattern that "
			       "selects at most %d tries each)\n", r->name, r->err ? "it failed" :
			       "it opens", TP_PROBE_EACH);
		}
		print_notes(c, i, j);
		i = j;
	}
	if (!tp_seen)
		any |= no_tracefs_note(c, any);
	if (!any)
		printf("no event matches%s%s\n", c->pattern ? " " : "", c->pattern ? c->pattern : "");
}

static void print_json(const struct list_ctx *c)
{
	struct tc_json j;

	tc_json_init(&j, stdout, true);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_arr_begin(&j, "events");
	for (size_t i = 0; i < c->n; i++) {
		const struct row *r = &c->rows[i];
		const char *a = r->aliases;

		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", r->name);
		tc_json_arr_begin(&j, "aliases");
		while (a && *a) {
			const char *comma = strchr(a, ',');
			size_t n = comma ? (size_t)(comma - a) : strlen(a);
			tc_json_strn(&j, NULL, a, n);
			a = comma ? comma + 1 : NULL;
		}
		tc_json_arr_end(&j);
		tc_json_str(&j, "source", tacho_event_source_name(r->src));
		tc_json_str(&j, "pmu", r->pmu);
		tc_json_str(&j, "description", r->desc);
		if (r->err_u <= 0)
			tc_json_bool(&j, "opens_with_u", r->err_u == 0);
		else
			tc_json_null(&j, "opens_with_u");
		if (!r->probed) {
			tc_json_null(&j, "opens");
			tc_json_null(&j, "error");
			tc_json_null(&j, "why");
		} else {
			tc_json_bool(&j, "opens", r->err == 0);
			if (r->err) {
				tc_json_str(&j, "error", tacho_err_name(r->err));
				tc_json_str(&j, "why", r->why >= 0 ? c->ex[r->why].text :
					    r->msg ? r->msg : tacho_strerror(r->err));
			} else {
				tc_json_null(&j, "error");
				tc_json_null(&j, "why");
			}
		}
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	if (c->tp_rep != SIZE_MAX)
		tc_json_str(&j, "tracepoint_probed_for_all", c->rows[c->tp_rep].name);
	else
		tc_json_null(&j, "tracepoint_probed_for_all");
	tc_json_obj_end(&j);
	tc_json_finish(&j);
}

/* "hardware,tracepoint" -> a mask of sources. 0 and *mask, or -1 with *bad and
 * *badlen naming the word that is not a source. */
static int parse_sources(const char *s, unsigned *mask, const char **bad, int *badlen)
{
	*mask = 0;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		unsigned src;

		for (src = 0; src < TACHO_EVENT_SRC_COUNT_; src++) {
			const char *name = tacho_event_source_name(src);
			if (strlen(name) == n && !strncmp(name, s, n))
				break;
		}
		if (src == TACHO_EVENT_SRC_COUNT_) {
			*bad = s;
			*badlen = (int)n;
			return -1;
		}
		*mask |= 1u << src;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

static int cmd_list_fn(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "source", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-probe", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct list_ctx c = { .probe = true, .tp_rep = SIZE_MAX };
	unsigned mask = 0;
	bool json = false;
	const char *bad;
	int opt, r, badlen, ret = EXIT_OK;

	opterr = 0;     /* cli_bad_option says it once, with the usage */
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (parse_sources(optarg, &mask, &bad, &badlen))
				return cli_usage_error(&cmd_list, "unknown source '%.*s' (expected "
						       "hardware, cache, software, pfm, raw, pmu, "
						       "tracepoint or breakpoint)", badlen, bad);
			break;
		case 'j':
			json = true;
			break;
		case 'P':
			c.probe = false;
			break;
		case 'h':
			return cli_help(&cmd_list);
		default:
			return cli_bad_option(&cmd_list, argc, argv);
		}
	}
	if (optind < argc)
		c.pattern = argv[optind++];
	if (optind < argc)
		return cli_usage_error(&cmd_list, "one pattern at most, not '%s'", argv[optind]);
	if (c.pattern)
		c.glob = strpbrk(c.pattern, "*?[") != NULL;

	c.tp_wanted = !mask || (mask & (1u << TACHO_EVENT_SRC_TRACEPOINT));
	r = tacho_events_foreach(NULL, mask, collect, &c);
	if (!r)
		probe_tracepoints(&c);
	if (r || c.oom) {
		cli_error("cannot list events: %s", tacho_strerror(r ? r : -ENOMEM));
		ret = EXIT_FAIL;
	} else if (json) {
		print_json(&c);
	} else {
		print_text(&c, !c.pattern && mask != 1u << TACHO_EVENT_SRC_TRACEPOINT);
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.rows[i].name);
		free(c.rows[i].aliases);
		free(c.rows[i].desc);
		free(c.rows[i].pmu);
		free(c.rows[i].spec);
		free(c.rows[i].msg);
	}
	free(c.rows);
	free(c.ex);
	return ret;
}

const struct cli_cmd cmd_list = {
	.name = "list",
	.fn = cmd_list_fn,
	.summary = "list the events this machine offers and whether they open here",
	.help = list_help,
};
