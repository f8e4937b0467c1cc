/* error.c - the error model: tacho_strerror(), tacho_err_name(), diagnostics. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

const char *tacho_version(void)
{
	return TACHO_VERSION_STRING;
}

int tacho_version_number(void)
{
	return TACHO_VERSION_NUMBER;
}

int tacho_version_check(int major, int minor, struct tacho_diag *diag)
{
	if (tc_diag_check(diag) || major < 0 || minor < 0)
		return -EINVAL;
	if (major != TACHO_VERSION_MAJOR)
		return tc_diag_set(diag, "libtacho", 0, 0, -TACHO_EVERSION,
				   "this program was built for libtacho %d.%d and runs with %s, "
				   "another major version (rebuild it against this library, or "
				   "install libtacho %d)", major, minor, TACHO_VERSION_STRING, major);
	if (minor > TACHO_VERSION_MINOR)
		return tc_diag_set(diag, "libtacho", 0, 0, -TACHO_EVERSION,
				   "this program was built for libtacho %d.%d and runs with the "
				   "older %s (install libtacho %d.%d or newer)", major, minor,
				   TACHO_VERSION_STRING, major, minor);
	return 0;
}

static const struct {
	int num;
	const char *name;
	const char *text;
} tacho_errors[] = {
#define TACHO_ERRNO_ROW_(name, num, text) { num, "TACHO_" #name, text },
	TACHO_ERRNO_MAP(TACHO_ERRNO_ROW_)
#undef TACHO_ERRNO_ROW_
};

/* The errno values tacho's callers meet; names for the rest come from strerrorname_np
 * where the C library has it. */
static const struct {
	int num;
	const char *name;
} os_errors[] = {
	{ EPERM, "EPERM" },   { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" },   { EINTR, "EINTR" },
	{ EIO, "EIO" },       { E2BIG, "E2BIG" },   { EBADF, "EBADF" },   { ECHILD, "ECHILD" },
	{ EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" }, { EFAULT, "EFAULT" },
	{ EBUSY, "EBUSY" },   { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" },
	{ EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { EMFILE, "EMFILE" }, { ENFILE, "ENFILE" },
	{ ENOSPC, "ENOSPC" }, { ERANGE, "ERANGE" }, { ENOSYS, "ENOSYS" },
	{ EOPNOTSUPP, "EOPNOTSUPP" }, { EOVERFLOW, "EOVERFLOW" }, { ENXIO, "ENXIO" },
	{ ENOEXEC, "ENOEXEC" }, { ETIMEDOUT, "ETIMEDOUT" }, { ENODATA, "ENODATA" },
};

const char *tacho_strerror(int err)
{
	static __thread char buf[64];
	int num = err < 0 ? -err : err;

	for (size_t i = 0; i < ARRAY_SIZE(tacho_errors); i++)
		if (tacho_errors[i].num == num)
			return tacho_errors[i].text;
	if (num > 0 && num < 4096) {
		/* strerror_r (GNU) returns a pointer to a static or to buf */
		return strerror_r(num, buf, sizeof(buf));
	}
	snprintf(buf, sizeof(buf), "unknown error %d", err);
	return buf;
}

const char *tacho_err_name(int err)
{
	int num = err < 0 ? -err : err;

	for (size_t i = 0; i < ARRAY_SIZE(tacho_errors); i++)
		if (tacho_errors[i].num == num)
			return tacho_errors[i].name;
	for (size_t i = 0; i < ARRAY_SIZE(os_errors); i++)
		if (os_errors[i].num == num)
			return os_errors[i].name;
	return NULL;
}

int tacho_diag_format(const struct tacho_diag *d, char *buf, size_t size)
{
	if (!d || tc_diag_check(d))
		return -EINVAL;
	if (d->line && d->column)
		return snprintf(buf, size, "%s:%u:%u: %s", d->source, d->line, d->column, d->message);
	if (d->line)
		return snprintf(buf, size, "%s:%u: %s", d->source, d->line, d->message);
	if (d->column)
		return snprintf(buf, size, "%s:%u: %s", d->source, d->column, d->message);
	return snprintf(buf, size, "%s: %s", d->source, d->message);
}

static tacho_log_fn *log_fn;
static void *log_arg;
static enum tacho_log_level log_max = TACHO_LOG_WARN;

void tacho_set_log(tacho_log_fn *fn, void *arg, enum tacho_log_level max)
{
	log_fn = fn;
	log_arg = arg;
	log_max = max;
}

bool tc_log_enabled(enum tacho_log_level level)
{
	return log_fn && level <= log_max;
}

void tc_log(enum tacho_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!tc_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(log_arg, level, msg);
}
