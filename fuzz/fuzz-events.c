/* fuzz-events.c - libFuzzer target for the event grammar (tacho_evlist_parse_opts),
 * against the fake PMU and tracefs trees of the tests when run from the repository
 * root, else against this machine's. Checks the parser's promises: an error leaves
 * *out NULL and points at a column inside the text (or just after it); a success gives
 * events whose attrs are complete; the caret formatter never overruns. Files named in
 * a spec (uprobe paths) are never opened (TACHO_EVENT_NO_FILES): an invented path could
 * be a FIFO, a device or a huge file, and the fuzzer must stay fast and harmless. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events/events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct tacho_event_opts fake = {
		.sz = sizeof(struct tacho_event_opts),
		.sysfs_pmu_root = "tests/data/sysfs-pmu/devices",
		.tracefs_root = "tests/data/sysfs-pmu/tracing",
		.flags = TACHO_EVENT_NO_FILES,
	};
	static const struct tacho_event_opts here = {
		.sz = sizeof(struct tacho_event_opts),
		.flags = TACHO_EVENT_NO_FILES,
	};
	const struct tacho_event_opts *opts = access(fake.sysfs_pmu_root, F_OK) == 0 ? &fake : &here;
	struct tacho_evlist *l = (struct tacho_evlist *)&l;
	struct tacho_diag d = { .sz = sizeof(d) };
	char caret[600];
	char *s;
	int r;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	r = tacho_evlist_parse_opts(s, opts, &l, &d);
	if (r) {
		if (l != NULL || d.message[0] == '\0')
			abort();
		if (d.column == 0 || d.column > strlen(s) + 1)
			abort();
		tacho_diag_caret(&d, caret, sizeof(caret));
	} else {
		size_t n = tacho_evlist_count(l);
		if (n == 0)
			abort();
		for (size_t i = 0; i < n; i++) {
			struct perf_event_attr a;
			const struct tc_event *ev = tc_evlist_get(l, i);
			if (tacho_evlist_attr(l, i, &a) != 0 || a.size != sizeof(a) || !ev->name ||
			    !ev->pmu || !ev->unit)
				abort();
			if (ev->group_leader >= (int)n)
				abort();
		}
		tacho_evlist_free(l);
	}
	free(s);
	return 0;
}
