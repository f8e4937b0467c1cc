/* fuzz-report-filter.c - libFuzzer target for the report's parsers of perf's syntax: the
 * sort keys (tacho_profile_parse_sort) and the filters (tacho_profile_set_filter: comma
 * lists of names and ids, cpulists, --time in seconds, +relative and percent slices).
 * The first byte chooses the parser ('s' sort, 't' time, 'p' pids, 'i' tids, 'c' cpus,
 * 'm' comms), the rest is its text. An accepted sort has 1 to 16 distinct valid keys; a
 * refused text a diagnostic of one line; an accepted filter keeps, of a profile of
 * eleven samples at t 100..110, the same samples when asked twice. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-int.h"
#include "util/util.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_profile_filter f = { .sz = sizeof(f) };
	struct tacho_profile *p;
	char *s;
	int err;

	if (!size)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	if (data[0] == 's') {
		enum tacho_sort keys[16];
		size_t n = 0;
		err = tacho_profile_parse_sort(s, keys, 16, &n, &d);
		if (!err) {
			if (!n || n > 16)
				abort();
			for (size_t i = 0; i < n; i++) {
				if ((unsigned)keys[i] > TACHO_SORT_EVENT)
					abort();
				for (size_t k = 0; k < i; k++)
					if (keys[k] == keys[i])
						abort();
			}
		} else if (err != -E2BIG && (!d.message[0] || strchr(d.message, '\n'))) {
			abort();
		}
		free(s);
		return 0;
	}
	/* a profile of samples only: the filters that need no symbols */
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(s);
		return 0;
	}
	p->smps = calloc(11, sizeof(*p->smps));
	p->ctxs = calloc(11, sizeof(*p->ctxs));
	if (!p->smps || !p->ctxs)
		goto out;
	p->nsmps = p->nctxs = 11;
	for (uint32_t i = 0; i < 11; i++) {
		p->ctxs[i] = (struct smp_ctx){ .pid = 10 + i % 3, .tid = 20 + i % 4,
					       .cpu = (uint16_t)(i % 5) };
		p->smps[i] = (struct smp){ .time = 100 + i, .period32 = 1, .ctx = i };
	}
	switch (data[0]) {
	case 't':
		f.time = s;
		break;
	case 'p':
		f.pids = s;
		break;
	case 'i':
		f.tids = s;
		break;
	case 'c':
		f.cpus = s;
		break;
	default:
		f.comms = s;   /* no process is known: nothing is kept */
		break;
	}
	err = tacho_profile_set_filter(p, &f, &d);
	if (err) {
		if (p->filter || (err != -ENOMEM && (!d.message[0] || strchr(d.message, '\n'))))
			abort();
	} else {
		for (size_t i = 0; i < p->nsmps; i++) {
			int a = tc_profile_keep(p, &p->smps[i]), b = tc_profile_keep(p, &p->smps[i]);
			if (a != b || a < 0 || (data[0] == 'm' && s[0] && a))
				abort();
		}
		tacho_profile_set_filter(p, NULL, NULL);
	}
out:
	free(p->smps);
	free(p->ctxs);
	free(p);
	free(s);
	return 0;
}
