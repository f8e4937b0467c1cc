/* fuzz-serve-query.c - libFuzzer target for the query of tacho serve's
 * /debug/pprof/profile (prof_parse, cli/serve/profile.c): the input, split at its
 * first NUL, is the seconds and the pid. Either both parse (seconds 1 to 300, written
 * back in decimal the same; pid positive) or the reason is one non-empty line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/serve/profile.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 2), why[512] = "", again[32];
	const char *pid;
	unsigned secs;
	pid_t p;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = s[size + 1] = '\0';
	pid = s + strlen(s) + 1;
	if (prof_parse(s, pid < s + size + 1 ? pid : NULL, &secs, &p, why, sizeof(why)) == 0) {
		snprintf(again, sizeof(again), "%u", secs);
		if (secs < 1 || secs > PROF_MAX_S || strcmp(again, s + (s[0] == '0' ?
								strspn(s, "0") : 0)))
			abort();
		if (pid < s + size + 1 && p < 1)
			abort();
	} else if (!why[0] || strchr(why, '\n')) {
		abort();
	}
	free(s);
	return 0;
}
