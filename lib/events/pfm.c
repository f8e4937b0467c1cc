/* pfm.c - CPU-specific event names through libpfm4: encoding, lookup, enumeration.
 *
 * libpfm4 knows the event tables of each CPU model and which of its PMUs are active
 * here (it detects the CPU with CPUID, not through the kernel, so it names a VM's
 * CPU even when the VM has no PMU to count with). An inactive PMU's events can be
 * encoded only with "pmu::EVENT" and LIBPFM_ENCODE_INACTIVE=1 in the environment
 * when libpfm4 starts (the tests use that to check encodings of other CPUs).
 *
 * libpfm4 is not linked: its header gives the types, and libpfm.so.4 is loaded with
 * dlopen at the first CPU-specific name, the first listing or the first question about
 * the core PMU's counters. Linked, its relocations and its constructor cost every
 * command, and every program linked with libtacho, about 0.8 ms of start-up that most
 * of them (tacho cpu, report, a region's begin) never use. A process that links
 * libpfm4 itself (the unit test that asks it directly) shares the one copy: dlopen of
 * a loaded soname returns it. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfmon/pfmlib_perf_event.h>

#include "events/pfm.h"
/* Only the errors: the areas that include <linux/perf_event.h> (counters, events) clash
 * with libpfm4's definitions of the same structs. */
#include "tacho/errors.h"
#include "util/util.h"

/* the soname of the ABI this header describes */
#define PFM_SONAME "libpfm.so.4"
_Static_assert(PFM_MAJ_VERSION(LIBPFM_VERSION) == 4, "libpfm4's soname is libpfm.so.4");

/* libpfm4's functions, as loaded; typed by its header */
static struct {
	__typeof__(pfm_initialize) *initialize;
	__typeof__(pfm_strerror) *strerror;
	__typeof__(pfm_get_event_info) *get_event_info;
	__typeof__(pfm_get_pmu_info) *get_pmu_info;
	__typeof__(pfm_get_os_event_encoding) *get_os_event_encoding;
	__typeof__(pfm_find_event) *find_event;
	__typeof__(pfm_get_event_attr_info) *get_event_attr_info;
	__typeof__(pfm_get_event_next) *get_event_next;
} pf;

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status = -TACHO_ENOVALUE;
/* libpfm4 does not promise that its lookups may run in several threads at once, and
 * tacho promises that parsing may: one lock around every call after initialization. */
static pthread_mutex_t pfm_lock = PTHREAD_MUTEX_INITIALIZER;

static void pfm_start(void)
{
	void *h = dlopen(PFM_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		tc_log(TACHO_LOG_WARN, "%s cannot be loaded (%s): CPU-specific event names are "
		       "not known (Debian: apt-get install libpfm4)", PFM_SONAME, dlerror());
		return;
	}
	/* the POSIX way of turning dlsym's object pointer into a function pointer */
	*(void **)&pf.initialize = dlsym(h, "pfm_initialize");
	*(void **)&pf.strerror = dlsym(h, "pfm_strerror");
	*(void **)&pf.get_event_info = dlsym(h, "pfm_get_event_info");
	*(void **)&pf.get_pmu_info = dlsym(h, "pfm_get_pmu_info");
	*(void **)&pf.get_os_event_encoding = dlsym(h, "pfm_get_os_event_encoding");
	*(void **)&pf.find_event = dlsym(h, "pfm_find_event");
	*(void **)&pf.get_event_attr_info = dlsym(h, "pfm_get_event_attr_info");
	*(void **)&pf.get_event_next = dlsym(h, "pfm_get_event_next");
	if (!(pf.initialize && pf.strerror && pf.get_event_info && pf.get_pmu_info &&
	      pf.get_os_event_encoding && pf.find_event && pf.get_event_attr_info &&
	      pf.get_event_next)) {
		tc_log(TACHO_LOG_WARN, "%s lacks libpfm4's functions: CPU-specific event names "
		       "are not known", PFM_SONAME);
		return;
	}
	/* kept loaded for the life of the process: the handle is never closed */
	pfm_status = pf.initialize() == PFM_SUCCESS ? 0 : -TACHO_ENOVALUE;
}

int tc_pfm_init(void)
{
	pthread_once(&pfm_once, pfm_start);
	return pfm_status;
}

const char *tc_pfm_strerror(int err)
{
	if (err == -ENOMEM)
		return "out of memory";
	if (tc_pfm_init() != 0)
		return "libpfm4 (" PFM_SONAME ") could not be loaded or started";
	return pf.strerror(err);
}

static char *copy_name(const char *name, size_t len)
{
	char *s = malloc(len + 1);

	if (s) {
		memcpy(s, name, len);
		s[len] = '\0';
	}
	return s;
}

/* The PMU of libpfm4's event idx; false when it is one of libpfm4's generic "perf"
 * PMUs, whose names (cycles, PERF_COUNT_HW_*) repeat the kernel's generic events
 * that tacho resolves itself, with its own modifier rules. */
static bool cpu_pmu_of(int idx, pfm_pmu_info_t *pinfo)
{
	pfm_event_info_t info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (pf.get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
		return false;
	memset(pinfo, 0, sizeof(*pinfo));
	pinfo->size = sizeof(*pinfo);
	return pf.get_pmu_info(info.pmu, pinfo) == PFM_SUCCESS && pinfo->name &&
	       pinfo->type != PFM_PMU_TYPE_OS_GENERIC;
}

int tc_pfm_encode(const char *name, size_t len, void *attr, size_t attr_size, char **pmu)
{
	struct perf_event_attr pattr;
	pfm_perf_encode_arg_t arg;
	pfm_pmu_info_t pinfo;
	char *s;
	int r;

	*pmu = NULL;
	if (tc_pfm_init() != 0)
		return PFM_ERR_NOINIT;
	s = copy_name(name, len);
	if (!s)
		return -ENOMEM;
	memset(&pattr, 0, sizeof(pattr));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = &pattr;
	pthread_mutex_lock(&pfm_lock);
	r = pf.get_os_event_encoding(s, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r == PFM_SUCCESS && !cpu_pmu_of(arg.idx, &pinfo))
		r = PFM_ERR_NOTFOUND;
	pthread_mutex_unlock(&pfm_lock);
	free(s);
	if (r != PFM_SUCCESS)
		return r;
	/* libpfm4's attr is taken whole: its privilege bits from the default plm
	 * (PLM0|PLM3: exclude_hv is 1 where the PMU has no hypervisor level, as on AMD,
	 * and ignored by x86 anyway), the exclude_guest = 1 it sets as perf does by
	 * default, and any ':u', ':k' or ':precise=' libpfm4 itself parsed. tacho's own
	 * trailing modifiers (parse.c) are applied on top, with perf's meaning. */
	memset(attr, 0, attr_size);
	memcpy(attr, &pattr, attr_size < sizeof(pattr) ? attr_size : sizeof(pattr));
	*pmu = strdup(pinfo.name);
	return *pmu ? 0 : -ENOMEM;
}

bool tc_pfm_knows(const char *name, size_t len)
{
	pfm_pmu_info_t pinfo;
	char *s;
	bool ok;
	int idx;

	if (tc_pfm_init() != 0)
		return false;
	s = copy_name(name, len);
	if (!s)
		return false;
	pthread_mutex_lock(&pfm_lock);
	idx = pf.find_event(s);
	ok = idx >= 0 && cpu_pmu_of(idx, &pinfo);
	pthread_mutex_unlock(&pfm_lock);
	free(s);
	return ok;
}

static int visit_event(int idx, const char *pmu, tc_pfm_visit_fn *fn, void *arg)
{
	pfm_event_info_t info;
	char buf[512];
	int r;

	/* the strings libpfm4 returns point into its static tables: usable unlocked */
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	pthread_mutex_lock(&pfm_lock);
	r = pf.get_event_info(idx, PFM_OS_NONE, &info);
	pthread_mutex_unlock(&pfm_lock);
	if (r != PFM_SUCCESS || !info.name)
		return 0;
	r = fn(arg, info.name, info.desc ? info.desc : "", pmu);
	if (r)
		return r;
	for (int a = 0; a < info.nattrs; a++) {
		pfm_event_attr_info_t ainfo;

		memset(&ainfo, 0, sizeof(ainfo));
		ainfo.size = sizeof(ainfo);
		pthread_mutex_lock(&pfm_lock);
		r = pf.get_event_attr_info(idx, a, PFM_OS_NONE, &ainfo);
		pthread_mutex_unlock(&pfm_lock);
		if (r != PFM_SUCCESS || ainfo.type != PFM_ATTR_UMASK || !ainfo.name)
			continue;
		snprintf(buf, sizeof(buf), "%s:%s", info.name, ainfo.name);
		r = fn(arg, buf, ainfo.desc ? ainfo.desc : "", pmu);
		if (r)
			return r;
	}
	return 0;
}

/* libpfm4's description of PMU p into *info: true when it is active here and named. */
static bool pmu_present(pfm_pmu_t p, pfm_pmu_info_t *info)
{
	int r;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	pthread_mutex_lock(&pfm_lock);
	r = pf.get_pmu_info(p, info);
	pthread_mutex_unlock(&pfm_lock);
	return r == PFM_SUCCESS && info->is_present && info->name;
}

int tc_pfm_foreach(tc_pfm_visit_fn *fn, void *arg)
{
	pfm_pmu_t p;
	int r;

	if (tc_pfm_init() != 0)
		return 0;
	pfm_for_all_pmus(p) {
		pfm_pmu_info_t pinfo;
		int idx;

		if (!pmu_present(p, &pinfo) || pinfo.type == PFM_PMU_TYPE_OS_GENERIC)
			continue;
		for (idx = pinfo.first_event; idx != -1;) {
			r = visit_event(idx, pinfo.name, fn, arg);
			if (r)
				return r;
			pthread_mutex_lock(&pfm_lock);
			idx = pf.get_event_next(idx);
			pthread_mutex_unlock(&pfm_lock);
		}
	}
	return 0;
}

int tc_pfm_core_counters(unsigned *gp, unsigned *fixed, char *name, size_t size)
{
	pfm_pmu_t p;

	if (tc_pfm_init() != 0)
		return -1;
	pfm_for_all_pmus(p) {
		pfm_pmu_info_t info;

		if (!pmu_present(p, &info))
			continue;
		/* the core PMU of this CPU, not its generic "perf" tables or uncore units */
		if (info.type != PFM_PMU_TYPE_CORE || info.num_cntrs <= 0 ||
		    !strncmp(info.name, "perf", 4))
			continue;
		*gp = (unsigned)info.num_cntrs;
		*fixed = info.num_fixed_cntrs > 0 ? (unsigned)info.num_fixed_cntrs : 0;
		snprintf(name, size, "%s", info.name);
		return 0;
	}
	return -1;
}
