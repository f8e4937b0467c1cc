/* fuzz-report-fields.c - libFuzzer target for the field list of `tacho report -F`
 * (tc_profile_parse_fields): a list it accepts has one field per comma-separated word,
 * each word a field's name; one it refuses says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "comm", "pid", "tid", "time", "cpu", "event",
				     "period", "ip", "sym", "symoff", "dso", "addr" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	unsigned char out[TC_PROFILE_MAX_FIELDS];
	char *s = malloc(size + 1);
	int n;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	n = tc_profile_parse_fields(s, out, &d);
	if (n > 0) {
		const char *w = s;

		if (n > TC_PROFILE_MAX_FIELDS)
			abort();
		for (int i = 0; i < n; i++) {
			size_t len = strcspn(w, ",");

			if (out[i] >= sizeof(names) / sizeof(names[0]) ||
			    strlen(names[out[i]]) != len || strncmp(names[out[i]], w, len))
				abort();
			w += len + (w[len] == ',');
		}
		if (*w)
			abort();   /* words left over */
	} else if (!d.message[0]) {
		abort();           /* refused without a reason */
	}
	free(s);
	return 0;
}
