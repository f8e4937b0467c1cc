/* report-code.c - one function of a loaded recording as code: its bytes from its binary
 * and its samples per instruction (report/code.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/code.h"
#include "report/report-int.h"
#include "util/util.h"
#include "tacho/errors.h"
#include "tacho/report.h"

#define CODE_MAX (1u << 20)    /* a function larger than this is not read */

void tc_profile_code_exit(struct tc_profile_code *c)
{
	if (!c)
		return;
	free(c->symbol);
	free(c->dso);
	free(c->bytes);
	free(c->rows);
	memset(c, 0, sizeof(*c));
}

int tc_profile_code(struct tacho_profile *p, const char *symbol, struct tc_profile_code *out,
		    struct tacho_diag *diag)
{
	uint32_t frame, raw = NONE, dso_name = NONE;
	struct tacho_profile_row *rows = NULL;
	uint64_t sym_start = 0, size = 0;
	struct tc_symdso *sd = NULL;
	size_t n = 0, k = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = tc_profile_annotate(p, symbol, &rows, &n);
	if (err)
		return err;
	/* the function's binary and its name in the symbol table, from its first sample
	 * that the report takes (tc_profile_annotate found one: every location is resolved
	 * by now) */
	for (size_t i = 0; i < p->nsmps && raw == NONE; i++) {
		int keep = tc_profile_keep(p, &p->smps[i]);   /* the event and the filter */
		const struct loc *l;
		size_t nf;
		if (keep < 0) {
			err = keep;
			goto out;
		}
		if (!keep || tc_profile_frames(p, &p->smps[i], &frame, 1, &nf) || !nf)
			continue;
		l = &p->locs[frame];
		if (l->sym != NONE && (tc_sym_name_match(pool_str(p, l->sym), symbol) ||
				       tc_sym_name_match(pool_str(p, l->raw), symbol))) {
			raw = l->raw;
			dso_name = l->dso;
			sym_start = l->sym_start;
		}
	}
	for (size_t i = 0; i < p->ndsos && !sd; i++)
		if (p->dsos[i].name == dso_name)
			sd = tc_profile_dso_open(p, &p->dsos[i]);
	if (!sd || tc_symdso_find(sd, pool_str(p, raw), &out->start, &size) ||
	    out->start != sym_start || !size || size > CODE_MAX) {
		err = tc_diag_set(diag, symbol, 0, 0, -TACHO_ENOVALUE, "cannot read the code of "
				  "%s in %s", symbol, dso_name != NONE ? pool_str(p, dso_name) : "?");
		goto out;
	}
	out->bytes = malloc((size_t)size);
	out->symbol = tc_strdup(symbol);
	out->dso = tc_strdup(pool_str(p, dso_name));
	if (!out->bytes || !out->symbol || !out->dso) {
		err = -ENOMEM;
		goto out;
	}
	out->len = tc_symdso_read(sd, out->start, out->bytes, (size_t)size);
	if (!out->len) {
		err = tc_diag_set(diag, symbol, 0, 0, -TACHO_ENOVALUE, "the code of %s is not in "
				  "its binary's file", symbol);
		goto out;
	}
	/* the sampled instructions only */
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].samples)
			continue;
		out->samples += rows[i].samples;
		out->events += rows[i].events;
		rows[k++] = rows[i];
	}
	out->rows = rows;
	out->nrows = k;
	rows = NULL;
out:
	free(rows);
	if (err)
		tc_profile_code_exit(out);
	return err;
}
