/* user-only.h - counting user space only where the kernel may not be counted: perf's
 * fallback to ':u' (perf_event_paranoid >= 2 without CAP_PERFMON), shared by the stat
 * session and the measurement sets of regions. */
#ifndef TACHO_EVENTS_USER_ONLY_H
#define TACHO_EVENTS_USER_ONLY_H

#include <linux/perf_event.h>
#include <stdbool.h>

#include "perf/perf.h"

/* True when this user may count user space only: perf_event_paranoid is 2 or more and
 * the user has neither CAP_PERFMON nor CAP_SYS_ADMIN (env from tc_perf_env_probe). */
bool tc_user_only_needed(const struct tc_perf_env *env);

/* Makes a user-only where that is what lets it count: a counts user space and the
 * kernel, it is no tracepoint or kprobe (those fire in the kernel: user-only they would
 * count nothing, silently), the kernel refuses it as given on the calling thread with
 * EACCES or EPERM, and opens it with exclude_kernel and exclude_hv. Returns 1 when a
 * was changed, 0 when not (a is then untouched). */
int tc_user_only_fallback(struct perf_event_attr *a);
/* Whether a user-only copy of a means anything: it counts the kernel and user space
 * both, and fires outside the kernel (not a tracepoint or a kprobe, whose hits in
 * user-only mode would all be dropped). */
bool tc_user_only_applies(const struct perf_event_attr *a);

/* The name of an event made user-only: the 'u' modifier added to the name's modifier
 * group ("cycles:p" -> "cycles:pu"), or ":u" appended ("page-faults" ->
 * "page-faults:u"). malloc'd; NULL when out of memory. */
char *tc_user_only_name(const char *name);

/* The sentence that says why, for the events made user-only (names: their list,
 * comma-separated): malloc'd, NULL when out of memory. */
char *tc_user_only_why(const struct tc_perf_env *env, const char *names);
/* Says it once, at level warn. 0 or -ENOMEM. */
int tc_user_only_warn(const struct tc_perf_env *env, const char *names);
/* The same with another verb than "counting" ("sampling": tacho record). */
char *tc_user_only_why_verb(const struct tc_perf_env *env, const char *verb, const char *names);
int tc_user_only_warn_verb(const struct tc_perf_env *env, const char *verb, const char *names);

#endif
