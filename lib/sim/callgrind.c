/* callgrind.c - reading callgrind's output files (valgrind's "callgrind format", its
 * manual's "Callgrind Format Specification"): the header's events, pid, part, trigger
 * and totals and every cost line, whose self costs add up to the totals; a result holds
 * the sums of the files of one run, and the regions that its dumps mark, matched up
 * again in the order of the dumps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "util/util.h"
#include "tacho/sim.h"

/* The header says which events the cost lines carry and in what order: "events: Ir Dr
 * Dw ...". One file names at most a few dozen (callgrind has 13 with the cache and
 * branch simulations on, more with --collect-systime and the like). */
#define MAX_EVENTS 32

/* One file: one process's counts between two dumps (callgrind starts again from zero
 * after each), in the result's order of events. */
struct sim_part {
	long pid;
	unsigned long part;          /* its "part:", the dumps' order within a process */
	size_t seq;                  /* the order it was read in, for files without one */
	char *trigger;               /* "Client Request: tacho:b:12:parse", or NULL */
	uint64_t cost[MAX_EVENTS];
};

/* The self costs of one place: (object, function, file, line, instruction). */
struct sim_row {
	uint32_t ob, fn, file;         /* pool ids (0: none) */
	uint32_t line;
	uint64_t addr;                 /* 0 without "instr" positions */
	uint64_t cost[MAX_EVENTS];
};

/* A call site: the instruction of function fn (in ob) that called function cfn, and
 * how often (callgrind's "cfn=" then "calls=COUNT TARGET" then the call's line). */
struct sim_call {
	uint32_t ob, fn, cfn;          /* pool ids */
	uint64_t addr;
	uint64_t count;
};

struct sim_region {
	struct tacho_sim_region pub;
	char *name;
	uint64_t incl[MAX_EVENTS], excl[MAX_EVENTS];
};

struct tacho_sim_result {
	size_t nev;
	char *ev[MAX_EVENTS];
	uint64_t total[MAX_EVENTS];
	bool have_exit;
	struct tacho_exit exit;
	const char *tool;              /* what ran (a static string), NULL when parsed */
	unsigned sims;                 /* TACHO_SIM_CACHES | TACHO_SIM_BRANCHES */
	struct sim_part *parts;
	size_t nparts, cap;
	struct sim_region *regions;
	size_t nregions;
	struct tc_strpool pool;        /* the rows' names */
	struct sim_row *rows;
	size_t nrows, rows_cap;
	struct tc_hmap row_idx;
	struct sim_call *calls;        /* with "instr" positions only */
	size_t ncalls;
};

static void regions_clear(struct tacho_sim_result *res)
{
	for (size_t i = 0; i < res->nregions; i++)
		free(res->regions[i].name);
	free(res->regions);
	res->regions = NULL;
	res->nregions = 0;
}

void tacho_sim_result_free(struct tacho_sim_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->nev; i++)
		free(res->ev[i]);
	for (size_t i = 0; i < res->nparts; i++)
		free(res->parts[i].trigger);
	free(res->parts);
	regions_clear(res);
	free(res->rows);
	free(res->calls);
	tc_hmap_exit(&res->row_idx);
	tc_strpool_exit(&res->pool);
	free(res);
}

struct cg_parse {
	const char *name;
	unsigned line;
	struct tacho_diag *diag;
	size_t nev;
	char *ev[MAX_EVENTS];
	uint64_t sum[MAX_EVENTS];      /* the self costs, line by line */
	uint64_t totals[MAX_EVENTS];
	bool have_totals;
	/* a file of cachegrind, whose first line is "desc:" (callgrind's is "# callgrind
	 * format" or a header line before any "desc:"): its names are never compressed,
	 * and "fn=(below main)" is a name */
	bool cachegrind;
	bool after_calls;              /* the line after "calls=" is the call's inclusive
					  cost, not a self cost: the callee's lines have it */
	uint32_t cfn;                  /* the callee of the next "calls=" (pool id) */
	uint64_t calls;                /* and how often it was called there */
	long pid;
	unsigned long part;
	/* a name line (or "cmd:") is held until the next line shows it is whole: callgrind
	 * writes a path as it is, a newline in it too */
	const struct name_key *pend_key;
	bool pending;
	unsigned pend_line;            /* its line, for its errors */
	struct tc_sb pend;
	char *trigger;
	/* where the costs are: positions (addr when "instr" is one of them), the names in
	 * force (pool ids of the file's own pool), and the rows they add up to */
	bool instr_pos[2];             /* position k is "instr" (else "line") */
	uint64_t last[2];              /* the last value of each position, for "+N" */
	struct tc_strpool pool;
	struct tc_hmap names[3];       /* compressed "(id)" of ob=, files, fn= -> pool id */
	uint32_t ob, file, fn;         /* the context (pool ids; 0: none) */
	uint32_t fl;                   /* the function's own file, before fi=/fe= */
	struct sim_row *rows;
	size_t nrows, rows_cap;
	struct tc_hmap row_idx;        /* key of (ob, fn, file, line, addr) -> row */
	struct sim_call *call_v;       /* the call sites, in p's pool ids */
	size_t ncalls, calls_cap;
};

static int cg_err(struct cg_parse *p, const char *what)
{
	return tc_diag_set(p->diag, p->name, p->line, 0, -TACHO_EPARSE, "%s", what);
}

static void cg_parse_exit(struct cg_parse *p)
{
	tc_sb_exit(&p->pend);
	for (size_t i = 0; i < p->nev; i++)
		free(p->ev[i]);
	p->nev = 0;
	free(p->trigger);
	p->trigger = NULL;
	free(p->rows);
	p->rows = NULL;
	free(p->call_v);
	p->call_v = NULL;
	tc_hmap_exit(&p->row_idx);
	for (int k = 0; k < 3; k++)
		tc_hmap_exit(&p->names[k]);
	tc_strpool_exit(&p->pool);
}

/* "events: Ir Dr Dw": names of letters and digits. */
static int parse_events(struct cg_parse *p, char *s)
{
	char *tok, *save = NULL;

	if (p->nev)
		return cg_err(p, "a second \"events:\" line");
	for (tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		for (const char *c = tok; *c; c++)
			if (!(*c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
			      (*c >= 'A' && *c <= 'Z')))
				return cg_err(p, "an event name that is not a word");
		if (p->nev == MAX_EVENTS)
			return cg_err(p, "more events than tacho reads (32)");
		for (size_t i = 0; i < p->nev; i++)
			if (!strcmp(p->ev[i], tok))
				return cg_err(p, "an event named twice");
		p->ev[p->nev] = tc_strdup(tok);
		if (!p->ev[p->nev])
			return -ENOMEM;
		p->nev++;
	}
	if (!p->nev)
		return cg_err(p, "\"events:\" names no event");
	return 0;
}

/* A decimal number; *s moves past it and the blanks after it. */
static int parse_num(char **s, uint64_t *out)
{
	char *c = *s;
	uint64_t v = 0;

	if (*c < '0' || *c > '9')
		return -1;
	for (; *c >= '0' && *c <= '9'; c++) {
		uint64_t d = (uint64_t)(*c - '0');
		if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			return -1;
		v = v * 10 + d;
	}
	if (*c && *c != ' ' && *c != '\t')
		return -1;
	while (*c == ' ' || *c == '\t')
		c++;
	*s = c;
	*out = v;
	return 0;
}

/* "totals: N N ..." (or a cost line's costs): at most nev numbers, missing ones 0. */
static int parse_costs(struct cg_parse *p, char *s, uint64_t *out)
{
	size_t i = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	memset(out, 0, p->nev * sizeof(*out));
	while (*s) {
		if (i == p->nev)
			return cg_err(p, "more costs than events");
		if (parse_num(&s, &out[i]) < 0)
			return cg_err(p, "a cost that is not a whole number");
		i++;
	}
	return 0;
}

/* A position: a number (decimal or 0x hex), "+N", "-N" (relative to the last value of
 * this position) or "*" (the same); *last becomes its value. */
static int parse_position(char **s, uint64_t *last)
{
	char *c = *s;
	uint64_t v = 0;
	int sign = 0;

	if (*c == '*') {
		c++;
		v = *last;
	} else {
		if (*c == '+' || *c == '-')
			sign = *c++ == '+' ? 1 : -1;
		if (c[0] == '0' && c[1] == 'x') {
			c += 2;
			if (!tc_is_hex_digit(*c))
				return -1;
			for (; tc_is_hex_digit(*c); c++) {
				if (v >> 60)
					return -1;
				v = v << 4 | (uint64_t)tc_hex_value(*c);
			}
		} else {
			if (*c < '0' || *c > '9')
				return -1;
			for (; *c >= '0' && *c <= '9'; c++) {
				if (v > UINT64_MAX / 10 - 1)
					return -1;
				v = v * 10 + (uint64_t)(*c - '0');
			}
		}
		/* relative positions wrap as callgrind's own unsigned arithmetic does */
		if (sign > 0)
			v = *last + v;
		else if (sign < 0)
			v = *last - v;
	}
	if (*c && *c != ' ' && *c != '\t')
		return -1;
	while (*c == ' ' || *c == '\t')
		c++;
	*s = c;
	*last = v;
	return 0;
}

static uint64_t row_hash(const struct sim_row *k)
{
	return tc_hash_u64(((uint64_t)k->ob << 32 | k->fn) ^
			   tc_hash_u64((uint64_t)k->file << 32 | k->line) ^
			   tc_hash_u64(k->addr + 0x9e3779b97f4a7c15ull));
}

/* Adds cost (nev values; map: their indices in the row, NULL: the same) to the row of
 * key's place, made if new. */
static int add_row(struct sim_row **rows, size_t *nrows, size_t *cap, struct tc_hmap *idx,
		   const struct sim_row *key, const uint64_t *cost, const size_t *map, size_t nev)
{
	uint64_t h = row_hash(key);
	struct sim_row *r = NULL;
	size_t pos = 0;
	uint32_t v;
	int err;

	while (tc_hmap_next(idx, h, &pos, &v)) {
		struct sim_row *c = &(*rows)[v];
		if (c->ob == key->ob && c->fn == key->fn && c->file == key->file &&
		    c->line == key->line && c->addr == key->addr) {
			r = c;
			break;
		}
	}
	if (!r) {
		if (*nrows == *cap) {
			size_t ncap = *cap ? 2 * *cap : 64;
			struct sim_row *n = realloc(*rows, ncap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			*rows = n;
			*cap = ncap;
		}
		err = tc_hmap_add(idx, h, (uint32_t)*nrows);
		if (err)
			return err;
		r = &(*rows)[(*nrows)++];
		*r = *key;
		memset(r->cost, 0, sizeof(r->cost));
	}
	for (size_t i = 0; i < nev; i++)
		r->cost[map ? map[i] : i] += cost[i];
	return 0;
}

static int add_call(struct cg_parse *p, uint64_t addr)
{
	if (p->ncalls == p->calls_cap) {
		size_t ncap = p->calls_cap ? 2 * p->calls_cap : 64;
		struct sim_call *n = realloc(p->call_v, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->call_v = n;
		p->calls_cap = ncap;
	}
	p->call_v[p->ncalls++] = (struct sim_call){ p->ob, p->fn, p->cfn, addr, p->calls };
	return 0;
}

/* A cost line: positions (one per "positions:" entry: line, or instr line; tacho
 * accepts one or two) then costs. */
static int parse_cost_line(struct cg_parse *p, char *s, unsigned npos)
{
	uint64_t c[MAX_EVENTS];
	struct sim_row key = { 0 };
	int err;

	if (!p->nev)
		return cg_err(p, "a cost line before \"events:\"");
	for (unsigned k = 0; k < npos; k++)
		if (parse_position(&s, &p->last[k]) < 0)
			return cg_err(p, "a cost line whose position is not a number");
	err = parse_costs(p, s, c);
	if (err)
		return err;
	if (p->after_calls) {
		p->after_calls = false;
		/* the call site: at an instruction (record --sim's call chains) */
		for (unsigned k = 0; k < npos && k < 2; k++)
			if (p->instr_pos[k] && p->cfn && p->fn)
				return add_call(p, p->last[k]);
		return 0;
	}
	for (size_t i = 0; i < p->nev; i++) {
		if (p->sum[i] > UINT64_MAX - c[i])
			return cg_err(p, "costs that add up beyond 64 bits");
		p->sum[i] += c[i];
	}
	key.ob = p->ob;
	key.fn = p->fn;
	key.file = p->file;
	for (unsigned k = 0; k < npos && k < 2; k++) {
		if (p->instr_pos[k])
			key.addr = p->last[k];
		else
			key.line = p->last[k] > UINT32_MAX ? UINT32_MAX : (uint32_t)p->last[k];
	}
	return add_row(&p->rows, &p->nrows, &p->rows_cap, &p->row_idx, &key, c, NULL, p->nev);
}

/* The name lines: which table their "(id)" is in (callgrind's three: objects, files,
 * functions) and what they set. */
enum name_sets { SETS_NOTHING, SETS_OB, SETS_FL, SETS_FILE, SETS_FN, SETS_CFN };

static const struct name_key {
	const char *key;
	int table;
	enum name_sets sets;
} name_keys[] = {
	{ "ob=", 0, SETS_OB },        { "fl=", 1, SETS_FL },        { "fi=", 1, SETS_FILE },
	{ "fe=", 1, SETS_FILE },      { "fn=", 2, SETS_FN },        { "cob=", 0, SETS_NOTHING },
	{ "cfi=", 1, SETS_NOTHING },  { "cfl=", 1, SETS_NOTHING },  { "cfn=", 2, SETS_CFN },
};

/* "(id) name" defines id, "(id)" refers to it, "name" is plain; a callee's names
 * (cob=, cfi=, cfn=) only define. */
static int name_line(struct cg_parse *p, char *s, const struct name_key *nk)
{
	uint64_t id = 0;
	uint32_t v;
	char *name = s;
	bool has_id = false;
	int err;

	if (*s == '(' && !p->cachegrind) {
		char *e = strchr(s, ')'), *n = s + 1;
		if (!e || e == n)
			return cg_err(p, "a name's \"(id)\" that is not closed");
		*e = '\0';
		if (parse_num(&n, &id) < 0 || *n)
			return cg_err(p, "a name's id that is not a whole number");
		has_id = true;
		name = e + 1;
		while (*name == ' ')
			name++;
	}
	if (has_id && !*name) {
		if (!tc_hmap_get(&p->names[nk->table], id, &v))
			return cg_err(p, "a name's id that was never defined");
	} else {
		err = tc_strpool_intern(&p->pool, name, &v);
		if (err)
			return err;
		v++;   /* 0 stays "no name" */
		if (has_id) {
			err = tc_hmap_put(&p->names[nk->table], id, v);
			if (err)
				return err;
		}
	}
	switch (nk->sets) {
	case SETS_OB:
		p->ob = v;
		break;
	case SETS_FL:
		p->fl = p->file = v;
		break;
	case SETS_FILE:
		p->file = v;
		break;
	case SETS_FN:
		/* a function's lines are in its own file until fi= or fe= */
		p->fn = v;
		p->file = p->fl;
		break;
	case SETS_CFN:
		p->cfn = v;
		break;
	case SETS_NOTHING:
		break;
	}
	return 0;
}

/* "positions: instr line": how many positions start a cost line. */
static int parse_positions(struct cg_parse *p, char *s, unsigned *npos)
{
	char *tok, *save = NULL;
	unsigned n = 0;

	for (tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (strcmp(tok, "line") && strcmp(tok, "instr"))
			return cg_err(p, "a position other than \"instr\" and \"line\"");
		if (n < 2)
			p->instr_pos[n] = !strcmp(tok, "instr");
		n++;
	}
	if (n < 1 || n > 2)
		return cg_err(p, "\"positions:\" names one or two positions");
	*npos = n;
	return 0;
}

/* Whether a line has a form of the format: empty, a comment, a cost line, or a word
 * followed by '=' or ':' (a name, a header, calls=, jump=). Anything else is refused,
 * or, right after a name, the rest of it. */
static bool has_form(const char *s)
{
	char c = s[0];

	if (!c || c == '#' || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*')
		return true;
	for (const char *k = s; *k; k++) {
		if (*k == '=' || *k == ':')
			return true;
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == ' '))
			break;
	}
	return false;
}

/* The held name, now whole. */
static int flush_name(struct cg_parse *p)
{
	int err = 0;

	if (!p->pending)
		return 0;
	p->pending = false;
	if (p->pend.oom)
		return -ENOMEM;
	if (p->pend_key) {
		unsigned line = p->line;

		p->line = p->pend_line;
		err = name_line(p, p->pend.buf, p->pend_key);
		p->line = line;
	}
	tc_sb_reset(&p->pend);
	return err;
}

/* Holds the name of a name line (nk) or of "cmd:" (NULL) until the next line. */
static int hold_name(struct cg_parse *p, const char *name, const struct name_key *nk)
{
	tc_sb_reset(&p->pend);
	tc_sb_adds(&p->pend, name);
	p->pend_key = nk;
	p->pend_line = p->line;
	p->pending = true;
	return p->pend.oom ? -ENOMEM : 0;
}

static int parse_line(struct cg_parse *p, char *s, unsigned *npos)
{
	char c = s[0];
	int err;

	/* callgrind writes a file's or the program's path into "ob=", "fl=", "fn=" or
	 * "cmd:" as it is, a newline in it too (the arguments of "cmd:" have it escaped):
	 * a line of no form of the format after one is the rest of its name. A path whose
	 * next line has a form (a cost line, "a: b") is read for what that line says */
	if (p->pending) {
		if (!has_form(s)) {
			tc_sb_addc(&p->pend, '\n');
			tc_sb_adds(&p->pend, s);
			return p->pend.oom ? -ENOMEM : 0;
		}
		err = flush_name(p);
		if (err)
			return err;
	}
	if (tc_starts_with(s, "cmd:"))
		return hold_name(p, s + 4, NULL);
	if (!c || c == '#')
		return 0;
	if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*')
		return parse_cost_line(p, s, *npos);
	if (tc_starts_with(s, "events:"))
		return parse_events(p, s + 7);
	if (tc_starts_with(s, "positions:"))
		return parse_positions(p, s + 10, npos);
	/* cachegrind's files end with "summary:", which is callgrind's "totals:" */
	if (tc_starts_with(s, "totals:") || tc_starts_with(s, "summary:")) {
		if (!p->nev)
			return cg_err(p, s[0] == 't' ? "\"totals:\" before \"events:\""
						     : "\"summary:\" before \"events:\"");
		p->have_totals = true;
		return parse_costs(p, s + (s[0] == 't' ? 7 : 8), p->totals);
	}
	if (tc_starts_with(s, "calls=")) {
		/* its positions are the call's target: they do not move this file's */
		char *t = s + 6;
		p->after_calls = true;
		if (parse_num(&t, &p->calls) < 0)
			p->calls = 0;
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(name_keys); k++)
		if (tc_starts_with(s, name_keys[k].key))
			return hold_name(p, s + strlen(name_keys[k].key), &name_keys[k]);
	if (tc_starts_with(s, "pid:") || tc_starts_with(s, "part:")) {
		uint64_t v;
		char *t = tc_trim(s + (s[1] == 'i' ? 4 : 5));
		if (parse_num(&t, &v) < 0 || *t || v > 0x7fffffff)
			return cg_err(p, "a pid or part that is not a whole number");
		if (s[1] == 'i')
			p->pid = (long)v;
		else
			p->part = (unsigned long)v;
		return 0;
	}
	if (tc_starts_with(s, "desc: Trigger:")) {
		free(p->trigger);
		p->trigger = tc_strdup(tc_trim(s + 14));
		return p->trigger ? 0 : -ENOMEM;
	}
	/* the rest is names (fn=, fl=, ob=, cfn=, ...), jumps (jump=, jcnd=) and header
	 * lines (version:, creator:, cmd:, desc:, summary:, ...): a word, then '=' or ':' */
	for (const char *k = s; *k; k++) {
		if (*k == '=' || *k == ':')
			return 0;
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == ' '))
			break;
	}
	return cg_err(p, "a line that is neither a header, a name nor a cost line");
}

/* --- regions: the dumps matched up again --- */

struct frame {
	int tid;
	size_t region;
	uint64_t start[MAX_EVENTS], child[MAX_EVENTS];
};

static int cmp_part(const void *a, const void *b)
{
	const struct sim_part *x = *(const struct sim_part *const *)a;
	const struct sim_part *y = *(const struct sim_part *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct sim_region *region_get(struct tacho_sim_result *r, const char *name)
{
	struct sim_region *g;

	for (size_t i = 0; i < r->nregions; i++)
		if (!strcmp(r->regions[i].name, name))
			return &r->regions[i];
	g = realloc(r->regions, (r->nregions + 1) * sizeof(*g));
	if (!g)
		return NULL;
	r->regions = g;
	g = &r->regions[r->nregions];
	memset(g, 0, sizeof(*g));
	g->name = tc_strdup(name);
	if (!g->name)
		return NULL;
	g->pub.name = g->name;
	r->nregions++;
	return g;
}

/* "Client Request: tacho:b:TID:NAME" */
static bool parse_mark(const char *trigger, char *kind, int *tid, const char **name)
{
	static const char req[] = "Client Request: " TC_VG_REGION_MARK;
	const char *s;
	char *end;
	long t;

	if (!trigger || !tc_starts_with(trigger, req))
		return false;
	s = trigger + sizeof(req) - 1;
	if ((s[0] != 'b' && s[0] != 'e') || s[1] != ':')
		return false;
	*kind = s[0];
	t = strtol(s + 2, &end, 10);
	if (end == s + 2 || *end != ':' || t < 0 || t > 0x7fffffff)
		return false;
	*tid = (int)t;
	*name = end + 1;
	return true;
}

static int regions_compute(struct tacho_sim_result *r)
{
	struct sim_part **order = NULL;
	struct frame *fr = NULL;
	size_t nfr = 0, cap = 0;
	uint64_t cum[MAX_EVENTS];
	int err = 0;

	regions_clear(r);
	if (!r->nparts)
		return 0;
	order = malloc(r->nparts * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < r->nparts; i++)
		order[i] = &r->parts[i];
	qsort(order, r->nparts, sizeof(*order), cmp_part);
	for (size_t i = 0; i < r->nparts && !err; i++) {
		const struct sim_part *pt = order[i];
		struct sim_region *g;
		const char *name;
		char kind;
		int tid;

		if (i == 0 || pt->pid != order[i - 1]->pid) {
			/* a new process: what its predecessor left open never ended */
			for (size_t k = 0; k < nfr; k++)
				r->regions[fr[k].region].pub.unbalanced++;
			nfr = 0;
			memset(cum, 0, sizeof(cum));
		}
		for (size_t k = 0; k < r->nev; k++)
			cum[k] += pt->cost[k];
		if (!parse_mark(pt->trigger, &kind, &tid, &name))
			continue;
		g = region_get(r, name);
		if (!g) {
			err = -ENOMEM;
			break;
		}
		if (kind == 'b') {
			if (nfr == cap) {
				struct frame *n = realloc(fr, (cap ? 2 * cap : 16) * sizeof(*n));
				if (!n) {
					err = -ENOMEM;
					break;
				}
				fr = n;
				cap = cap ? 2 * cap : 16;
			}
			fr[nfr].tid = tid;
			fr[nfr].region = (size_t)(g - r->regions);
			memcpy(fr[nfr].start, cum, sizeof(cum));
			memset(fr[nfr].child, 0, sizeof(fr[nfr].child));
			nfr++;
			continue;
		}
		/* an end closes the innermost open region of its thread, if it is this one */
		size_t top = nfr;
		for (size_t k = nfr; k-- > 0;)
			if (fr[k].tid == tid) {
				top = k;
				break;
			}
		if (top == nfr || fr[top].region != (size_t)(g - r->regions)) {
			g->pub.unbalanced++;
			continue;
		}
		g->pub.calls++;
		for (size_t k = 0; k < r->nev; k++) {
			uint64_t incl = cum[k] - fr[top].start[k];
			g->incl[k] += incl;
			g->excl[k] += incl - fr[top].child[k];
			for (size_t up = top; up-- > 0;)
				if (fr[up].tid == tid) {
					fr[up].child[k] += incl;
					break;
				}
		}
		memmove(&fr[top], &fr[top + 1], (nfr - top - 1) * sizeof(*fr));
		nfr--;
	}
	for (size_t k = 0; !err && k < nfr; k++)
		r->regions[fr[k].region].pub.unbalanced++;
	free(fr);
	free(order);
	return err;
}

/* A name of p's pool (id + 1, 0: none) in r's pool, the same way. */
static int repool(struct tacho_sim_result *r, const struct cg_parse *p, uint32_t id,
		  uint32_t *out)
{
	int err;

	if (!id) {
		*out = 0;
		return 0;
	}
	err = tc_strpool_intern(&r->pool, tc_strpool_str(&p->pool, id - 1), out);
	if (!err)
		(*out)++;
	return err;
}

/* The rows of the file p read, added to r's (map: p's events in r's order). */
static int add_rows(struct tacho_sim_result *r, const struct cg_parse *p, const size_t *map)
{
	for (size_t i = 0; i < p->nrows; i++) {
		const struct sim_row *src = &p->rows[i];
		struct sim_row key = { .line = src->line, .addr = src->addr };
		int err = repool(r, p, src->ob, &key.ob);

		if (!err)
			err = repool(r, p, src->fn, &key.fn);
		if (!err)
			err = repool(r, p, src->file, &key.file);
		if (!err)
			err = add_row(&r->rows, &r->nrows, &r->rows_cap, &r->row_idx, &key,
				      src->cost, map, p->nev);
		if (err)
			return err;
	}
	if (p->ncalls) {
		struct sim_call *n = realloc(r->calls, (r->ncalls + p->ncalls) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->calls = n;
		for (size_t i = 0; i < p->ncalls; i++) {
			const struct sim_call *src = &p->call_v[i];
			struct sim_call *c = &r->calls[r->ncalls];
			int err = repool(r, p, src->ob, &c->ob);
			if (!err)
				err = repool(r, p, src->fn, &c->fn);
			if (!err)
				err = repool(r, p, src->cfn, &c->cfn);
			if (err)
				return err;
			c->addr = src->addr;
			c->count = src->count;
			r->ncalls++;
		}
	}
	return 0;
}

/* Adds the file p read to r: its events (new ones at the end), its costs to the totals,
 * its part and its rows. Checked before anything changes: r is untouched on error but
 * for -ENOMEM of the rows and the regions' matching. */
static int add_file(struct tacho_sim_result *r, struct cg_parse *p)
{
	size_t map[MAX_EVENTS], nnew = 0;
	char *names[MAX_EVENTS] = { 0 };
	struct sim_part *pt;
	int err;

	for (size_t i = 0; i < p->nev; i++) {
		size_t k;
		for (k = 0; k < r->nev && strcmp(r->ev[k], p->ev[i]); k++)
			;
		if (k == r->nev)
			k = r->nev + nnew++;
		else if (r->total[k] > UINT64_MAX - p->sum[i])
			return -TACHO_EPARSE;
		map[i] = k;
	}
	if (r->nev + nnew > MAX_EVENTS)
		return -TACHO_EPARSE;
	if (r->nparts == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		pt = realloc(r->parts, cap * sizeof(*pt));
		if (!pt)
			return -ENOMEM;
		r->parts = pt;
		r->cap = cap;
	}
	for (size_t i = 0; i < p->nev; i++)
		if (map[i] >= r->nev) {
			names[map[i] - r->nev] = tc_strdup(p->ev[i]);
			if (!names[map[i] - r->nev]) {
				for (size_t k = 0; k < nnew; k++)
					free(names[k]);
				return -ENOMEM;
			}
		}
	/* nothing can fail from here on but the regions */
	for (size_t k = 0; k < nnew; k++) {
		r->ev[r->nev + k] = names[k];
		r->total[r->nev + k] = 0;
	}
	r->nev += nnew;
	pt = &r->parts[r->nparts];
	memset(pt, 0, sizeof(*pt));
	pt->pid = p->pid;
	pt->part = p->part;
	pt->seq = r->nparts;
	pt->trigger = p->trigger;
	p->trigger = NULL;
	for (size_t i = 0; i < p->nev; i++) {
		r->total[map[i]] += p->sum[i];
		pt->cost[map[i]] = p->sum[i];
	}
	r->nparts++;
	err = add_rows(r, p, map);
	if (!err)
		err = regions_compute(r);
	return err;
}

int tacho_sim_result_parse(const char *text, size_t len, const char *name,
			   struct tacho_sim_result **res, struct tacho_diag *diag)
{
	struct cg_parse p = { .name = name ? name : "", .diag = diag,
			      .cachegrind = len >= 5 && !memcmp(text, "desc:", 5) };
	struct tacho_sim_result *fresh = NULL;
	unsigned npos = 1;
	char *buf;
	size_t i = 0;
	int err = 0;

	if (tc_diag_check(diag) || (!text && len) || !res)
		return -EINVAL;
	tc_strpool_init(&p.pool);
	for (int k = 0; k < 3; k++)
		tc_hmap_init(&p.names[k]);
	tc_hmap_init(&p.row_idx);
	tc_sb_init(&p.pend);
	buf = malloc(len + 1);
	if (!buf) {
		cg_parse_exit(&p);
		return -ENOMEM;
	}
	while (i < len && !err) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		p.line++;
		memcpy(buf, text + i, j - i);
		buf[j - i] = '\0';
		if (memchr(buf, '\0', j - i))
			err = cg_err(&p, "a NUL byte inside a line");
		else
			err = parse_line(&p, buf, &npos);
		i = j + 1;
	}
	if (!err)
		err = flush_name(&p);
	free(buf);
	if (!err && !p.nev)
		err = tc_diag_set(diag, p.name, 0, 0, -TACHO_EEMPTY, "no \"events:\" line");
	if (!err && p.have_totals) {
		for (size_t k = 0; k < p.nev; k++)
			if (p.totals[k] != p.sum[k]) {
				err = tc_diag_set(diag, p.name, 0, 0, -TACHO_EPARSE,
						  "the totals of %s (%llu) are not the sum of its "
						  "cost lines (%llu)", p.ev[k],
						  (unsigned long long)p.totals[k],
						  (unsigned long long)p.sum[k]);
				break;
			}
	}
	if (err)
		goto out;
	if (!*res) {
		err = tc_sim_result_new(&fresh);
		if (err)
			goto out;
	}
	err = add_file(*res ? *res : fresh, &p);
	if (err == -TACHO_EPARSE)
		tc_diag_set(diag, p.name, 0, 0, err, "costs that add up beyond 64 bits over the "
			    "files, or more than 32 events");
	if (err && fresh) {
		tacho_sim_result_free(fresh);
		fresh = NULL;
	}
	if (fresh)
		*res = fresh;
out:
	cg_parse_exit(&p);
	return err;
}

int tacho_sim_result_total(const struct tacho_sim_result *res, const char *ev, uint64_t *out)
{
	if (!res || !ev || !out)
		return -EINVAL;
	for (size_t i = 0; i < res->nev; i++)
		if (!strcmp(res->ev[i], ev)) {
			*out = res->total[i];
			return 0;
		}
	return -TACHO_ENOVALUE;
}

const struct tacho_exit *tacho_sim_result_exit(const struct tacho_sim_result *res)
{
	return res && res->have_exit ? &res->exit : NULL;
}

size_t tacho_sim_result_nregions(const struct tacho_sim_result *res)
{
	return res ? res->nregions : 0;
}

const struct tacho_sim_region *tacho_sim_result_region(const struct tacho_sim_result *res,
						       size_t i)
{
	return res && i < res->nregions ? &res->regions[i].pub : NULL;
}

int tc_sim_result_values(const struct tacho_sim_result *res, long region, bool exclusive,
			 const char *const **names, const uint64_t **vals, size_t *n)
{
	if (region >= 0 && (size_t)region >= res->nregions)
		return -EINVAL;
	*names = (const char *const *)res->ev;
	*n = res->nev;
	if (region < 0)
		*vals = res->total;
	else
		*vals = exclusive ? res->regions[region].excl : res->regions[region].incl;
	return 0;
}

static const char *pool_name(const struct tacho_sim_result *res, uint32_t id)
{
	return id ? tc_strpool_str(&res->pool, id - 1) : NULL;
}

long tc_sim_result_pid(const struct tacho_sim_result *res)
{
	return res->nparts ? res->parts[0].pid : 0;
}

size_t tc_sim_result_nplaces(const struct tacho_sim_result *res)
{
	return res->nrows;
}

void tc_sim_result_place(const struct tacho_sim_result *res, size_t i, const char **ob,
			 const char **fn, const char **file, unsigned *line, uint64_t *addr,
			 const uint64_t **cost)
{
	const struct sim_row *r = &res->rows[i];

	*ob = pool_name(res, r->ob);
	*fn = pool_name(res, r->fn);
	*file = pool_name(res, r->file);
	*line = r->line;
	*addr = r->addr;
	*cost = r->cost;
}

size_t tc_sim_result_ncalls(const struct tacho_sim_result *res)
{
	return res->ncalls;
}

void tc_sim_result_call(const struct tacho_sim_result *res, size_t i, const char **ob,
			const char **fn, const char **cfn, uint64_t *addr, uint64_t *count)
{
	const struct sim_call *c = &res->calls[i];

	*ob = pool_name(res, c->ob);
	*fn = pool_name(res, c->fn);
	*cfn = pool_name(res, c->cfn);
	*addr = c->addr;
	*count = c->count;
}

void tc_sim_result_set_exit(struct tacho_sim_result *res, const struct tacho_exit *ex)
{
	res->exit = *ex;
	res->have_exit = true;
}

void tc_sim_result_set_run(struct tacho_sim_result *res, const char *tool, unsigned sims)
{
	res->tool = tool;
	res->sims = sims;
}

const char *tacho_sim_result_tool(const struct tacho_sim_result *res)
{
	return res ? res->tool : NULL;
}

unsigned tacho_sim_result_sims(const struct tacho_sim_result *res)
{
	return res ? res->sims : 0;
}

int tc_sim_result_new(struct tacho_sim_result **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	tc_strpool_init(&(*out)->pool);
	tc_hmap_init(&(*out)->row_idx);
	return 0;
}
