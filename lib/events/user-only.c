/* user-only.c - perf's fallback to ':u': an event the kernel refuses because it includes
 * the kernel (perf_event_paranoid >= 2, no CAP_PERFMON) is counted in user space only,
 * named so, and said once; never for events that only fire in the kernel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "events/user-only.h"
#include "perf/engine.h"
#include "util/util.h"

bool tc_user_only_needed(const struct tc_perf_env *env)
{
	/* perf_allow_kernel() in include/linux/perf_event.h: paranoid > 1 and not
	 * perfmon_capable() refuses every attr with exclude_kernel clear */
	return env->paranoid != TC_PARANOID_UNKNOWN && env->paranoid >= 2 &&
	       !tc_perf_env_privileged(env);
}

/* Tracepoints and kprobes fire in the kernel: the kernel drops their hits in kernel
 * mode for an exclude_kernel event (perf_tp_event_match), so ':u' would read 0. */
static bool fires_in_kernel(const struct perf_event_attr *a)
{
	char pmu[64];

	if (a->type == PERF_TYPE_TRACEPOINT)
		return true;
	return tc_pmu_name_of_type(a->type, pmu, sizeof(pmu)) == 0 && !strcmp(pmu, "kprobe");
}

bool tc_user_only_applies(const struct perf_event_attr *a)
{
	return !a->exclude_kernel && !a->exclude_user && !fires_in_kernel(a);
}

int tc_user_only_fallback(struct perf_event_attr *a)
{
	struct perf_event_attr u;
	int err;

	if (!tc_user_only_applies(a))
		return 0;
	u = *a;
	u.disabled = 1;
	err = tc_perf_probe(&u, NULL);
	if (err != -EACCES && err != -EPERM)
		return 0;
	u.exclude_kernel = 1;
	u.exclude_hv = 1;
	if (tc_perf_probe(&u, NULL) != 0)
		return 0;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	return 1;
}

/* The letters of a modifier group that can stand with 'u' (a group with u, k or h in
 * it excludes user space or the kernel already, and never reaches here). */
static bool is_modifier_group(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("GHIpD", *s))
			return false;
	return true;
}

char *tc_user_only_name(const char *name)
{
	const char *colon = strrchr(name, ':');
	size_t n = strlen(name);
	char *out = malloc(n + 3);

	if (!out)
		return NULL;
	memcpy(out, name, n);
	if (colon && colon[1] && !strchr(colon, '/') && is_modifier_group(colon + 1)) {
		out[n] = 'u';
		out[n + 1] = '\0';
	} else {
		memcpy(out + n, ":u", 3);
	}
	return out;
}

char *tc_user_only_why_verb(const struct tc_perf_env *env, const char *verb, const char *names)
{
	struct tc_sb sb = TC_SB_INIT;

	tc_sb_init(&sb);
	tc_sb_addf(&sb, "%s %s in user space only (':u'): perf_event_paranoid is %d "
		   "and this user has neither CAP_PERFMON nor CAP_SYS_ADMIN, so the kernel "
		   "may not be counted (run as root, give the program CAP_PERFMON, or lower "
		   "kernel.perf_event_paranoid with sysctl to 1)", verb, names, env->paranoid);
	return tc_sb_detach(&sb);
}

char *tc_user_only_why(const struct tc_perf_env *env, const char *names)
{
	return tc_user_only_why_verb(env, "counting", names);
}

int tc_user_only_warn_verb(const struct tc_perf_env *env, const char *verb, const char *names)
{
	char *why = tc_user_only_why_verb(env, verb, names);

	if (!why)
		return -ENOMEM;
	tc_log(TACHO_LOG_WARN, "%s", why);
	free(why);
	return 0;
}

int tc_user_only_warn(const struct tc_perf_env *env, const char *names)
{
	return tc_user_only_warn_verb(env, "counting", names);
}
