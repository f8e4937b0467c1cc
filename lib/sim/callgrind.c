/* callgrind.c - reading callgrind's output files (valgrind's "callgrind format", its
 * manual's "Callgrind Format Specification"): the header's events and totals and every
 * cost line, whose self costs add up to the totals; a result holds the sums of the
 * files of one run. */
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

struct tacho_sim_result {
	size_t nev;
	char *ev[MAX_EVENTS];
	uint64_t total[MAX_EVENTS];
	bool have_exit;
	struct tacho_exit exit;
};

void tacho_sim_result_free(struct tacho_sim_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->nev; i++)
		free(res->ev[i]);
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
	bool after_calls;              /* the line after "calls=" is the call's inclusive
					  cost, not a self cost: the callee's lines have it */
};

static int cg_err(struct cg_parse *p, const char *what)
{
	return tc_diag_set(p->diag, p->name, p->line, 0, -TACHO_EPARSE, "%s", what);
}

static void cg_parse_exit(struct cg_parse *p)
{
	for (size_t i = 0; i < p->nev; i++)
		free(p->ev[i]);
	p->nev = 0;
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
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*c - '0');
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

/* A position: a number (decimal or 0x hex), "+N", "-N" (relative) or "*" (the same). */
static int skip_position(char **s)
{
	char *c = *s;

	if (*c == '*') {
		c++;
	} else {
		if (*c == '+' || *c == '-')
			c++;
		if (c[0] == '0' && c[1] == 'x') {
			c += 2;
			if (!tc_is_hex_digit(*c))
				return -1;
			while (tc_is_hex_digit(*c))
				c++;
		} else {
			if (*c < '0' || *c > '9')
				return -1;
			while (*c >= '0' && *c <= '9')
				c++;
		}
	}
	if (*c && *c != ' ' && *c != '\t')
		return -1;
	while (*c == ' ' || *c == '\t')
		c++;
	*s = c;
	return 0;
}

/* A cost line: positions (one per "positions:" entry: line, or instr line; tacho
 * accepts one or two) then costs. */
static int parse_cost_line(struct cg_parse *p, char *s, unsigned npos)
{
	uint64_t c[MAX_EVENTS];
	int err;

	if (!p->nev)
		return cg_err(p, "a cost line before \"events:\"");
	for (unsigned k = 0; k < npos; k++)
		if (skip_position(&s) < 0)
			return cg_err(p, "a cost line whose position is not a number");
	err = parse_costs(p, s, c);
	if (err)
		return err;
	if (p->after_calls) {
		p->after_calls = false;
		return 0;
	}
	for (size_t i = 0; i < p->nev; i++) {
		if (p->sum[i] > UINT64_MAX - c[i])
			return cg_err(p, "costs that add up beyond 64 bits");
		p->sum[i] += c[i];
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
		n++;
	}
	if (n < 1 || n > 2)
		return cg_err(p, "\"positions:\" names one or two positions");
	*npos = n;
	return 0;
}

static int parse_line(struct cg_parse *p, char *s, unsigned *npos)
{
	char c = s[0];

	if (!c || c == '#')
		return 0;
	if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*')
		return parse_cost_line(p, s, *npos);
	if (tc_starts_with(s, "events:"))
		return parse_events(p, s + 7);
	if (tc_starts_with(s, "positions:"))
		return parse_positions(p, s + 10, npos);
	if (tc_starts_with(s, "totals:")) {
		if (!p->nev)
			return cg_err(p, "\"totals:\" before \"events:\"");
		p->have_totals = true;
		return parse_costs(p, s + 7, p->totals);
	}
	if (tc_starts_with(s, "calls=")) {
		p->after_calls = true;
		return 0;
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

static int add_into(struct tacho_sim_result *r, const struct cg_parse *p)
{
	for (size_t i = 0; i < p->nev; i++) {
		size_t k;
		for (k = 0; k < r->nev && strcmp(r->ev[k], p->ev[i]); k++)
			;
		if (k == r->nev) {
			if (r->nev == MAX_EVENTS)
				return -TACHO_EPARSE;
			r->ev[k] = tc_strdup(p->ev[i]);
			if (!r->ev[k])
				return -ENOMEM;
			r->total[k] = 0;
			r->nev++;
		}
		if (r->total[k] > UINT64_MAX - p->sum[i])
			return -TACHO_EPARSE;
		r->total[k] += p->sum[i];
	}
	return 0;
}

int tacho_sim_result_parse(const char *text, size_t len, const char *name,
			   struct tacho_sim_result **res, struct tacho_diag *diag)
{
	struct cg_parse p = { .name = name ? name : "", .diag = diag };
	struct tacho_sim_result *r, *tmp = NULL;
	unsigned npos = 1;
	char *buf;
	size_t i = 0;
	int err = 0;

	if (tc_diag_check(diag) || (!text && len) || !res)
		return -EINVAL;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
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
	free(buf);
	if (!err && !p.nev)
		err = tc_diag_set(diag, p.name, 0, 0, -TACHO_EEMPTY, "no \"events:\" line");
	if (!err && p.have_totals) {
		for (size_t k = 0; k < p.nev; k++)
			if (p.totals[k] != p.sum[k]) {
				p.line = 0;
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
	/* add into a copy, so that *res is untouched on error */
	r = tmp = calloc(1, sizeof(*tmp));
	if (!tmp) {
		err = -ENOMEM;
		goto out;
	}
	if (*res) {
		for (size_t k = 0; k < (*res)->nev && !err; k++) {
			tmp->ev[k] = tc_strdup((*res)->ev[k]);
			if (!tmp->ev[k])
				err = -ENOMEM;
			tmp->total[k] = (*res)->total[k];
			tmp->nev = k + 1;
		}
		tmp->have_exit = (*res)->have_exit;
		tmp->exit = (*res)->exit;
	}
	if (!err)
		err = add_into(tmp, &p);
	if (err == -TACHO_EPARSE)
		tc_diag_set(diag, p.name, 0, 0, err, "costs that add up beyond 64 bits, or too "
			    "many events over the files");
	if (err) {
		tacho_sim_result_free(tmp);
		goto out;
	}
	tacho_sim_result_free(*res);
	*res = r;
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

void tc_sim_result_set_exit(struct tacho_sim_result *res, const struct tacho_exit *ex)
{
	res->exit = *ex;
	res->have_exit = true;
}

int tc_sim_result_new(struct tacho_sim_result **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}
