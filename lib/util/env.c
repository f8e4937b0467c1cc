/* env.c - the environment as the library reads it: every variable through one check of
 * the kernel's AT_SECURE, so that a privileged program linked with libtacho is never
 * steered by whoever started it. */
#include <stdlib.h>
#include <sys/auxv.h>

#include "util/util.h"

/* -1: the kernel's word (AT_SECURE); 0 or 1: a test's (tc_env_force_secure) */
static int forced = -1;

bool tc_env_secure(void)
{
	int f = __atomic_load_n(&forced, __ATOMIC_RELAXED);

	return f >= 0 ? f == 1 : getauxval(AT_SECURE) != 0;
}

void tc_env_force_secure(int secure)
{
	__atomic_store_n(&forced, secure < 0 ? -1 : secure != 0, __ATOMIC_RELAXED);
}

const char *tc_env_trusted(const char *name, bool *ignored)
{
	/* getenv, not secure_getenv: the decision is this function's, so that the test's
	 * seam can make it (secure_getenv asks the kernel itself) */
	const char *v = getenv(name);

	if (ignored)
		*ignored = false;
	if (v && tc_env_secure()) {
		if (ignored)
			*ignored = true;
		return NULL;
	}
	return v;
}
