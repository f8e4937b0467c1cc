/* diag.c - tc_diag_set, tc_diag_check: filling in a caller's struct tacho_diag. Not in error.c: a
 * program that takes internal helpers from libtacho.a beside libtacho.so (the Makefile's
 * $(BUILD)/so/tacho) must not get a second copy of error.c's exported functions and log
 * state with it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "util/util.h"

int tc_diag_check(const struct tacho_diag *d)
{
	return d && d->sz < TC_DIAG_SZ_V1 ? -EINVAL : 0;
}

int tc_diag_set(struct tacho_diag *d, const char *source, unsigned line, unsigned column,
		int err, const char *fmt, ...)
{
	va_list ap;

	if (!d || d->sz < TC_DIAG_SZ_V1)   /* the public entry said -EINVAL already */
		return err;
	snprintf(d->source, sizeof(d->source), "%s", source ? source : "");
	d->line = line;
	d->column = column;
	d->hint = TACHO_HINT_NONE;   /* a new message; its setter adds a hint after */
	va_start(ap, fmt);
	vsnprintf(d->message, sizeof(d->message), fmt, ap);
	va_end(ap);
	return err;
}
