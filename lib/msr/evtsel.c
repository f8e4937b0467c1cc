/* evtsel.c - the event-select value perf programs for a core-PMU event, computed from its
 * perf_event_attr as the kernel does it (arch/x86/events/core.c x86_pmu_hw_config and
 * __x86_pmu_enable_event; intel/core.c for AnyThread and TSX; amd/core.c for the event
 * bits 35:32 and HostOnly/GuestOnly), so that the table can decode it: the seeds' CESR
 * view of today's events, without touching a register. */
#include <errno.h>
#include <string.h>

#include "msr/msr.h"

#define EVENT      0x00000000000000ffull
#define UMASK      0x000000000000ff00ull
#define USR        (1ull << 16)
#define OS         (1ull << 17)
#define EDGE       (1ull << 18)
#define INT        (1ull << 20)
#define ANY        (1ull << 21)
#define EN         (1ull << 22)
#define INV        (1ull << 23)
#define CMASK      0x00000000ff000000ull
#define IN_TX      (1ull << 32)
#define IN_TXCP    (1ull << 33)
#define AMD_EVENT_HI (0xfull << 32)
#define GUESTONLY  (1ull << 40)
#define HOSTONLY   (1ull << 41)

/* What the kernel copies from the config of a raw event (X86_RAW_EVENT_MASK). */
#define RAW_MASK (EVENT | UMASK | EDGE | INV | CMASK)

static bool core_pmu(const struct perf_event_attr *attr, const char *pmu)
{
	/* on x86 the core PMU ("cpu") registers as PERF_TYPE_RAW; hybrid parts have two,
	 * with types of their own */
	return attr->type == PERF_TYPE_RAW ||
	       (pmu && (!strcmp(pmu, "cpu") || !strcmp(pmu, "cpu_core") || !strcmp(pmu, "cpu_atom")));
}

int tacho_msr_evtsel(const struct perf_event_attr *attr, const char *pmu,
		     const struct tacho_msr_cpu *cpu, const struct tacho_msr **msr,
		     uint64_t *value)
{
	const struct tacho_msr *m;
	uint64_t v, c;

	if (!attr || !cpu || !msr || !value)
		return -EINVAL;
	if (attr->type == PERF_TYPE_HARDWARE || attr->type == PERF_TYPE_HW_CACHE ||
	    !core_pmu(attr, pmu))
		return -TACHO_ENOVALUE;
	c = attr->config;
	/* INT always (perf keeps the overflow interrupt for sampling and for extending
	 * the counter), USR and OS unless excluded, EN when scheduled */
	v = INT | EN;
	if (!attr->exclude_user)
		v |= USR;
	if (!attr->exclude_kernel)
		v |= OS;
	switch (cpu->vendor) {
	case TACHO_VENDOR_INTEL:
		m = tc_msr_by_name("P6_PERFEVTSEL0");
		if (!m || !tacho_msr_applies(m, cpu)) {
			m = tc_msr_by_name("IA32_PERFEVTSEL0");
			/* the driver takes AnyThread (checked against the PMU version and
			 * the paranoid level) and Haswell's TSX qualifiers on their own */
			v |= c & (ANY | IN_TX | IN_TXCP);
		}
		v |= c & RAW_MASK;
		break;
	case TACHO_VENDOR_AMD:
	case TACHO_VENDOR_HYGON:
		m = tc_msr_by_name(cpu->family >= 0x15 ? "PERF_CTL0" : "AMD_PERFEVTSEL0");
		v |= c & (RAW_MASK | AMD_EVENT_HI);
		/* both set would count in both modes: the driver counts nothing instead */
		if (attr->exclude_host && attr->exclude_guest)
			v &= ~(USR | OS);
		else if (attr->exclude_host)
			v |= GUESTONLY;
		else if (attr->exclude_guest)
			v |= HOSTONLY;
		break;
	default:
		return -TACHO_EMSRCPU;
	}
	if (!m)
		return -TACHO_ENOMSR;
	*msr = m;
	*value = v;
	return 0;
}

int tacho_msr_set_add_event(struct tacho_msr_set *set, const char *label,
			    const struct perf_event_attr *attr, const char *pmu,
			    const struct tacho_msr_cpu *cpu)
{
	const struct tacho_msr *m = NULL;
	struct tc_msr_entry *e;
	uint64_t v = 0;
	char who[160];
	int err, r;

	if (!set || !attr || !cpu)
		return -EINVAL;
	err = tacho_msr_evtsel(attr, pmu, cpu, &m, &v);
	if (err == -EINVAL)
		return err;
	e = tc_msr_set_push(set, -1, err ? NULL : m, err ? 0 : m->address);
	if (!e)
		return -ENOMEM;
	if (label && !(e->label = tc_strdup(label))) {
		set->n--;
		return -ENOMEM;
	}
	if (!err) {
		e->value = v;
		e->has_value = true;
		return 0;
	}
	tacho_msr_cpu_format(cpu, who, sizeof(who));
	if (attr->type == PERF_TYPE_HARDWARE)
		r = tc_msr_entry_failf(e, err, TACHO_HINT_NONE, "a generic hardware event: the "
				       "kernel picks its encoding for this CPU from its own "
				       "table (on Intel, the architectural event of that name)");
	else if (attr->type == PERF_TYPE_HW_CACHE)
		r = tc_msr_entry_failf(e, err, TACHO_HINT_NONE, "a generic cache event: the "
				       "kernel picks its encoding for this CPU from its own table");
	else if (err == -TACHO_EMSRCPU)
		r = tc_msr_entry_failf(e, err, TACHO_HINT_NONE, "tacho knows the event-select "
				       "layout of Intel and AMD, and this is %s", who);
	else
		r = tc_msr_entry_failf(e, err, TACHO_HINT_NONE, "an event of the PMU '%s' (type "
				       "%u), not of the core counters: no event-select register "
				       "holds it", pmu ? pmu : "?", attr->type);
	return r;
}
