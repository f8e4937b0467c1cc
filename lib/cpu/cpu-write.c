/* cpu-write.c - the writers of a CPU description (what `tacho cpu` prints): the report
 * part by part (identity, topology, caches and TLBs with the leaf of every value, the
 * performance-monitoring unit, the TSC, the features, the notes and the cross-check with
 * the kernel) and the JSON document (docs/schemas.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid.h"
#include "output/output.h"
#include "util/util.h"
#include "tacho/cpu.h"
#include "tacho/output.h"

/* --- small helpers --- */

static const char *plural(unsigned n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void cache_label(const struct tacho_cpu_cache *c, char *buf, size_t size)
{
	snprintf(buf, size, "L%u%s", c->level,
		 c->type == TACHO_CACHE_DATA ? "d" : c->type == TACHO_CACHE_INSTRUCTION ? "i" : "");
}

static const char *leaf_source(enum tacho_cpu_source s, uint8_t descriptor, char *buf, size_t size)
{
	if (s == TACHO_SRC_LEAF_2 && descriptor)
		snprintf(buf, size, "%s, descriptor 0x%02x", tacho_cpu_source_name(s), descriptor);
	else
		snprintf(buf, size, "%s", tacho_cpu_source_name(s));
	return buf;
}

static void page_sizes(unsigned mask, char *buf, size_t size)
{
	static const struct { unsigned bit; const char *name; } pages[] = {
		{ TACHO_PAGE_4K, "4K" }, { TACHO_PAGE_2M, "2M" },
		{ TACHO_PAGE_4M, "4M" }, { TACHO_PAGE_1G, "1G" },
	};
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(pages); i++)
		if (mask & pages[i].bit) {
			int n = snprintf(buf + o, size - o, "%s%s", o ? "+" : "", pages[i].name);
			if (n < 0 || (size_t)n >= size - o)
				break;
			o += (size_t)n;
		}
	if (!o)
		snprintf(buf, size, "?");
}

static bool has_feature(const struct tacho_cpu_info *info, unsigned i)
{
	return i / 64 < TACHO_CPU_FEATURE_WORDS && (info->features[i / 64] >> (i % 64)) & 1;
}

/* Prints words wrapped at 78 columns, each line indented. */
static void print_wrapped(FILE *f, unsigned indent, const char *first_prefix, const char *text)
{
	unsigned col;
	const char *p = text;

	col = (unsigned)fprintf(f, "%*s%s", (int)indent, "", first_prefix);
	while (*p) {
		size_t n = strcspn(p, " ");
		if (col > indent + strlen(first_prefix) && col + 1 + n > 78) {
			fprintf(f, "\n%*s", (int)(indent + strlen(first_prefix)), "");
			col = indent + (unsigned)strlen(first_prefix);
		} else if (col > indent + strlen(first_prefix)) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, n, f);
		col += (unsigned)n;
		p += n;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* --- feature groups: vector and crypto first, then by the leaf they live in --- */

#define P(s) { s, sizeof(s) - 1 }
static const struct { const char *p; size_t n; } simd_prefixes[] = {
	P("mmx"), P("sse"), P("ssse"), P("pni"), P("avx"), P("fma"), P("f16c"), P("amx"),
	P("xop"), P("3dnow"), P("aes"), P("vaes"), P("pclmul"), P("vpclmul"), P("gfni"),
	P("sha"), P("sm3"), P("sm4"), P("apx"), P("xsave"),
};
#undef P

/* Asked for each set flag and group: the first letter rules out most prefixes (a
 * strncmp for each took a quarter of tacho cpu's instructions) */
static bool is_simd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(simd_prefixes); i++)
		if (name[0] == simd_prefixes[i].p[0] &&
		    !strncmp(name, simd_prefixes[i].p, simd_prefixes[i].n))
			return true;
	return false;
}

struct feature_group {
	const char *title;
	uint32_t leaf_lo, leaf_hi;   /* features living in these leaves (not vector ones) */
};

static const struct feature_group feature_groups[] = {
	{ "basic (leaf 1)", 0x1, 0x1 },
	{ "power (leaf 6)", 0x6, 0x6 },
	{ "extended (leaf 7)", 0x7, 0x7 },
	{ "other basic leaves", 0x2, 0x3fffffff },
	{ "AMD and extended (0x8000_0001)", 0x80000001, 0x80000001 },
	{ "power and RAS (0x8000_0007)", 0x80000007, 0x80000007 },
	{ "other extended leaves", 0x80000002, 0xffffffff },
	{ "hypervisor leaves", 0x40000000, 0x4fffffff },
};

/* Collects the names of set flags that fit: group -1 is vector/crypto. */
static void feature_list(const struct tacho_cpu_info *info, int group, struct tc_sb *sb)
{
	unsigned n = tacho_cpu_feature_count();

	for (unsigned i = 0; i < n; i++) {
		const char *name = tacho_cpu_feature_name(i);
		uint32_t leaf, sub;
		unsigned bit;
		char reg;
		bool in;

		if (!name || !has_feature(info, i) || tacho_cpu_feature_where(i, &leaf, &sub, &reg, &bit))
			continue;
		if (group < 0) {
			in = is_simd(name);
		} else {
			in = !is_simd(name) && leaf >= feature_groups[group].leaf_lo &&
			     leaf <= feature_groups[group].leaf_hi;
			/* a leaf claimed by an earlier, narrower group is not repeated */
			for (int g = 0; in && g < group; g++)
				if (leaf >= feature_groups[g].leaf_lo && leaf <= feature_groups[g].leaf_hi)
					in = false;
		}
		if (in) {
			if (sb->len)
				tc_sb_addc(sb, ' ');
			tc_sb_adds(sb, name);
		}
	}
}

/* --- the report --- */

/* The associativity column of the cache and TLB tables: "full", "8-way" or "?". */
static void fmt_ways(bool fully_assoc, unsigned ways, char *buf, size_t size)
{
	if (fully_assoc)
		snprintf(buf, size, "full");
	else if (ways)
		snprintf(buf, size, "%u-way", ways);
	else
		snprintf(buf, size, "?");
}

/* "0-15,32-47": the dump's CPUs in a cache group. */
static void fmt_cpu_set(const uint64_t *set, char *buf, size_t size)
{
	const unsigned max = TACHO_CPU_SET_WORDS * 64;
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < max && o < size; i++) {
		unsigned j = i;

		if (!((set[i / 64] >> (i % 64)) & 1))
			continue;
		while (j + 1 < max && (set[(j + 1) / 64] >> ((j + 1) % 64)) & 1)
			j++;
		o += (size_t)snprintf(buf + o, size - o, j > i ? "%s%u-%u" : "%s%u", o ? "," : "",
				      i, j);
		i = j;
	}
}

/* The cache groups of kind k, or 0 when its CPUs all report the same caches (or the
 * caller's description predates the groups). */
static unsigned cache_groups_of(const struct tacho_cpu_info *info, unsigned k,
				const struct tacho_cpu_cache_group **first)
{
	unsigned n = 0;

	*first = NULL;
	if (info->sz < TC_CPU_INFO_SZ_GROUPS)
		return 0;
	for (unsigned g = 0; g < info->ncache_groups && g < TACHO_CPU_MAX_CACHE_GROUPS; g++)
		if (info->cache_groups[g].core_type == k) {
			if (!n)
				*first = &info->cache_groups[g];
			n++;
		}
	return n;
}

/* inst_head: the instances column's title ("per package", or "in these CPUs" for a
 * cache group's table). */
static void print_caches(FILE *f, const struct tacho_cpu_cache *caches, unsigned n,
			 const char *inst_head)
{
	struct tc_table *t = tc_table_new(7);

	if (!t)
		return;
	tc_table_addf(t, "cache\tsize\tways\tline\tshared by up to\t%s\tfrom", inst_head);
	for (unsigned i = 0; i < n; i++) {
		const struct tacho_cpu_cache *c = &caches[i];
		char label[16], size[32], ways[32], line[16], share[32], inst[16], src[64];

		cache_label(c, label, sizeof(label));
		if (c->size)
			tc_fmt_size(c->size, size, sizeof(size));
		else
			snprintf(size, sizeof(size), "?");
		fmt_ways(c->fully_assoc, c->ways, ways, sizeof(ways));
		if (c->line_size)
			snprintf(line, sizeof(line), "%u B", c->line_size);
		else
			snprintf(line, sizeof(line), "?");
		if (c->sharing)
			snprintf(share, sizeof(share), "%u %s", c->sharing, plural(c->sharing, "thread", "threads"));
		else
			snprintf(share, sizeof(share), "?");
		if (c->instances >= 0)
			snprintf(inst, sizeof(inst), "%d", c->instances);
		else
			snprintf(inst, sizeof(inst), "?");
		tc_table_addf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s", label, size, ways, line, share, inst,
			      leaf_source(c->source, c->descriptor, src, sizeof(src)));
	}
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 5, true);
	tc_table_print(t, f, 4, 2);
	tc_table_free(t);
}

static void print_tlbs(FILE *f, const struct tacho_cpu_core_type *ct)
{
	struct tc_table *t = tc_table_new(5);

	if (!t)
		return;
	tc_table_addf(t, "TLB\tpages\tentries\tways\tfrom");
	for (unsigned i = 0; i < ct->ntlbs; i++) {
		const struct tacho_cpu_tlb *l = &ct->tlbs[i];
		char pages[32], ways[32], src[64];

		page_sizes(l->page_sizes, pages, sizeof(pages));
		fmt_ways(l->fully_assoc, l->ways, ways, sizeof(ways));
		tc_table_addf(t, "L%u %s\t%s\t%u\t%s\t%s", l->level, tacho_tlb_type_name(l->type), pages,
			      l->entries, ways, leaf_source(l->source, l->descriptor, src, sizeof(src)));
	}
	tc_table_align_right(t, 2, true);
	tc_table_print(t, f, 4, 2);
	tc_table_free(t);
}

static void print_pmu(FILE *f, const struct tacho_cpu_view *v)
{
	const struct tacho_cpu_info *info = v->info;
	const struct tacho_cpu_pmu *p = &info->pmu;
	bool amd = info->vendor == TACHO_VENDOR_AMD || info->vendor == TACHO_VENDOR_HYGON;
	/* AMD announces more than the four legacy counters with PerfCtrExtCore
	 * (0x8000_0001 ECX[23]) and PerfMonV2 (0x8000_0022 EAX[0]); the legacy four have
	 * no CPUID bit at all (APM Vol. 2, 13.2). */
	bool amd_announced = amd && (p->amd_perfmon_v2 || tacho_cpu_has(info, "perfctr_core"));
	int kernel = v->sysfs ? v->sysfs->core_pmu : -1;

	fprintf(f, "\nperformance monitoring\n");
	if (p->version > 0) {
		fprintf(f, "    architectural version %u (leaf 0xA): %u general counters of %u bits",
			p->version, p->gp_counters, p->gp_width);
		if (p->fixed_counters)
			fprintf(f, ", %u fixed of %u bits", p->fixed_counters, p->fixed_width);
		fputc('\n', f);
		if (p->arch_events_len) {
			static const char *const events[] = {
				"core cycles", "instructions", "reference cycles", "LLC references",
				"LLC misses", "branches", "branch misses", "top-down slots",
				"top-down backend bound", "top-down bad speculation",
				"top-down frontend bound", "top-down retiring", "LBR inserts",
			};
			struct tc_sb sb = TC_SB_INIT;
			tc_sb_init(&sb);
			for (unsigned i = 0; i < p->arch_events_len && i < 32; i++)
				if (p->arch_events & (1u << i)) {
					if (sb.len)
						tc_sb_adds(&sb, ", ");
					if (i < ARRAY_SIZE(events))
						tc_sb_adds(&sb, events[i]);
					else
						tc_sb_addf(&sb, "event %u", i);
				}
			if (!sb.oom)
				print_wrapped(f, 4, "architectural events: ", sb.len ? sb.buf : "none");
			tc_sb_exit(&sb);
		}
	} else if (amd_announced) {
		fprintf(f, "    AMD core counters: %u (%s)\n", p->gp_counters,
			p->amd_perfmon_v2 ? "PerfMonV2, 0x8000_0022" : "PerfCtrExtCore, 0x8000_0001 ECX[23]");
	} else if (amd && kernel == 1) {
		fprintf(f, "    CPUID announces no counters beyond AMD's four legacy ones, which need no\n"
			   "    CPUID bit; the kernel registered a core PMU, so they are there\n");
	} else if (info->hypervisor_bit) {
		fprintf(f, "    no architectural performance monitoring: CPUID leaf 0xA is zero; "
			   "this is a VM without a virtual PMU\n");
		if (amd)
			fprintf(f, "    (nor do AMD's PerfCtrExtCore or PerfMonV2 bits announce counters)\n");
	} else if (amd) {
		fprintf(f, "    CPUID does not describe the counters: AMD parts without PerfCtrExtCore\n"
			   "    have four legacy core counters that no CPUID bit announces\n");
	} else {
		fprintf(f, "    no architectural performance monitoring: CPUID leaf 0xA is zero\n");
	}
	if (amd && (p->amd_nb_counters || p->amd_umc_counters || p->amd_lbr_stack))
		fprintf(f, "    AMD: %u data-fabric counters, %u memory-controller counters, "
			   "LBR stack of %u\n", p->amd_nb_counters, p->amd_umc_counters, p->amd_lbr_stack);
	if (kernel == 0)
		print_wrapped(f, 4, "", "the kernel agrees: it registered no core PMU (there is no "
			      "/sys/bus/event_source/devices/cpu); hardware events cannot be counted "
			      "here, while software events, tracepoints, breakpoints and uprobes can");
	else if (kernel == 1 && p->version == 0 && !amd)
		fprintf(f, "    but the kernel registered a core PMU: counting may still work\n");
}

static void print_tsc(FILE *f, const struct tacho_cpu_view *v)
{
	const struct tacho_cpu_tsc *t = &v->info->tsc;
	char hz[32];

	fprintf(f, "\ntime-stamp counter\n");
	if (!t->present) {
		fprintf(f, "    none (CPUID.1:EDX[4] is clear)\n");
		return;
	}
	fprintf(f, "    %s%s%s\n", t->invariant ? "invariant (constant rate in every P- and C-state)"
					     : "not invariant (0x8000_0007 EDX[8] clear): its rate may change",
		t->rdtscp ? ", RDTSCP" : "", t->deadline ? ", TSC-deadline timer" : "");
	if (v->tsc_hz > 0) {
		fprintf(f, "    frequency %s Hz (%.3f MHz), source: %s\n",
			tc_fmt_grouped((uint64_t)(v->tsc_hz + 0.5), hz, sizeof(hz)), v->tsc_hz / 1e6,
			tacho_tsc_source_name(v->tsc_source));
		if (v->tsc_source != TACHO_TSC_FREQ_KERNEL && v->tsc_kernel_hz > 0)
			fprintf(f, "    the kernel's conversion says %.3f MHz\n", v->tsc_kernel_hz / 1e6);
		if (v->tsc_source != TACHO_TSC_FREQ_CALIBRATED && v->tsc_calibrated_hz > 0)
			fprintf(f, "    measured against CLOCK_MONOTONIC_RAW: %.3f MHz\n",
				v->tsc_calibrated_hz / 1e6);
	}
	if (v->live && v->tsc_hz <= 0 && v->tsc_unmeasured)
		fprintf(f, "    frequency not measured: no free source gives it (%s)\n",
			v->tsc_unmeasured);
	if (t->hz) {
		fprintf(f, "    CPUID says %.3f MHz (%s)\n", (double)t->hz / 1e6,
			tacho_tsc_source_name(t->source));
	} else {
		fprintf(f, "    CPUID does not give the frequency (leaves 0x15, 0x16 and 0x4000_0010 "
			   "are absent or zero)\n");
	}
	if (t->base_mhz)
		fprintf(f, "    leaf 0x16: base %u MHz, maximum %u MHz, bus %u MHz\n", t->base_mhz,
			t->max_mhz, t->bus_mhz);
}

static void print_topology(FILE *f, const struct tacho_cpu_info *info)
{
	const struct tacho_cpu_topology *tp = &info->topo;

	fprintf(f, "%-14s %u %s, %u %s per package, %u %s and %u %s per package",
		"topology", tp->packages, plural(tp->packages, "package", "packages"),
		tp->dies_per_package, plural(tp->dies_per_package, "die", "dies"),
		tp->cores_per_package, plural(tp->cores_per_package, "core", "cores"),
		tp->logical_per_package, plural(tp->logical_per_package, "thread", "threads"));
	fprintf(f, " (%s)\n", tacho_cpu_source_name(tp->source));
	fprintf(f, "%-14s %u logical %s in the dump%s\n", "", info->ncpus,
		plural(info->ncpus, "CPU", "CPUs"),
		tp->complete ? ", every one of its packages" : "");
	if (info->ncore_types > 1)
		for (unsigned k = 0; k < info->ncore_types; k++) {
			const struct tacho_cpu_core_type *ct = &info->core_types[k];
			fprintf(f, "%-14s %s: %u %s, %u %s per package%s%s%s\n", k ? "" : "core types",
				tacho_core_kind_name(ct->kind), ct->cores, plural(ct->cores, "core", "cores"),
				ct->threads, plural(ct->threads, "thread", "threads"),
				ct->uarch ? " (" : "", ct->uarch ? ct->uarch : "", ct->uarch ? ")" : "");
		}
}

static void write_table(FILE *f, const struct tacho_cpu_view *v,
			const struct tc_write_settings *w)
{
	const struct tacho_cpu_info *info = v->info;
	struct tc_sb sb = TC_SB_INIT;
	const char *hint;
	char line[400];

	fprintf(f, "%-14s %s\n", "brand", info->brand[0] ? info->brand : "(no brand string)");
	fprintf(f, "%-14s %s (\"%s\")\n", "vendor", tacho_cpu_vendor_name(info->vendor),
		info->vendor_string);
	fprintf(f, "%-14s family 0x%x (%u), model 0x%x (%u), stepping 0x%x (%u); "
		   "CPUID.1:EAX 0x%08" PRIx32 "\n", "signature", info->family, info->family,
		info->model, info->model, info->stepping, info->stepping, info->signature);
	fprintf(f, "%-14s %s%s%s%s\n", "uarch", info->uarch ? info->uarch : "unknown to tacho",
		info->uarch_note ? " (" : "", info->uarch_note ? info->uarch_note : "",
		info->uarch_note ? ")" : "");
	if (info->hypervisor_bit || info->hypervisor != TACHO_HV_NONE)
		fprintf(f, "%-14s %s (signature \"%s\"): this is a virtual machine\n", "hypervisor",
			tacho_hypervisor_name(info->hypervisor), info->hv_signature);
	else
		fprintf(f, "%-14s none reported (CPUID.1:ECX[31] clear)\n", "hypervisor");
	print_topology(f, info);
	if (info->phys_addr_bits)
		fprintf(f, "%-14s %u physical, %u virtual\n", "address bits", info->phys_addr_bits,
			info->virt_addr_bits);
	if (v->decoded)
		fprintf(f, "%-14s %s\n", "decoded", v->decoded);

	for (unsigned k = 0; k < info->ncore_types; k++) {
		const struct tacho_cpu_core_type *ct = &info->core_types[k];
		/* the kind is named on hybrid parts, and for one CPU of them (--cpu) */
		bool named = info->ncore_types > 1 || ct->kind != TACHO_CORE_GENERAL;
		const struct tacho_cpu_cache_group *grp;
		unsigned ngroups = cache_groups_of(info, k, &grp);

		/* CPUs of this kind that report different caches: a table for each set */
		for (unsigned g = 0; g < ngroups; grp++) {
			char cpus[256];

			if (grp->core_type != k)
				continue;
			fmt_cpu_set(grp->cpus, cpus, sizeof(cpus));
			fprintf(f, "\ncaches%s%s%s reported by CPU%s %s of the dump\n",
				named ? " of the " : "", named ? tacho_core_kind_name(ct->kind) : "",
				named ? " cores" : "", grp->ncpus == 1 ? "" : "s", cpus);
			print_caches(f, grp->caches, grp->ncaches, "in these CPUs");
			g++;
		}
		if (ngroups)
			goto tlbs;
		fprintf(f, "\ncaches%s%s%s\n", named ? " of the " : "",
			named ? tacho_core_kind_name(ct->kind) : "", named ? " cores" : "");
		if (ct->ncaches)
			print_caches(f, ct->caches, ct->ncaches, "per package");
		else
			fprintf(f, "    none described by CPUID\n");
tlbs:
		if (ct->ntlbs) {
			fprintf(f, "\nTLBs%s%s%s\n", named ? " of the " : "",
				named ? tacho_core_kind_name(ct->kind) : "", named ? " cores" : "");
			print_tlbs(f, ct);
		}
	}
	print_pmu(f, v);
	print_tsc(f, v);

	fprintf(f, "\nfeatures\n");
	for (int g = -1; g < (int)ARRAY_SIZE(feature_groups); g++) {
		tc_sb_init(&sb);
		feature_list(info, g, &sb);
		if (sb.len && !sb.oom) {
			char prefix[48];
			snprintf(prefix, sizeof(prefix), "%s: ", g < 0 ? "vector and crypto"
							      : feature_groups[g].title);
			print_wrapped(f, 4, prefix, sb.buf);
		}
		tc_sb_exit(&sb);
	}

	fprintf(f, "\nnotes\n");
	for (unsigned i = 0; i < info->nnotes; i++)
		print_wrapped(f, 4, "- ", info->notes[i]);
	if (v->crosscheck) {
		for (unsigned i = 0; i < v->crosscheck->n; i++) {
			snprintf(line, sizeof(line), "cross-check with the kernel: %s", v->crosscheck->items[i].text);
			print_wrapped(f, 4, "- ", line);
		}
		if (v->crosscheck->n == 0)
			snprintf(line, sizeof(line), "the kernel (/sys/devices/system/cpu, /proc/cpuinfo) "
				 "agrees on all %u values compared", v->crosscheck->checked);
		else
			snprintf(line, sizeof(line), "the kernel (/sys/devices/system/cpu, /proc/cpuinfo) "
				 "was asked about %u values; those not named above agree", v->crosscheck->checked);
		print_wrapped(f, 4, "- ", line);
	} else if (!v->live) {
		print_wrapped(f, 4, "- ", "decoded from a dump: not cross-checked with this machine's "
			      "kernel, and the TSC frequency is only what CPUID says");
	} else if (v->crosscheck_skipped) {
		snprintf(line, sizeof(line), "not cross-checked with the kernel (%s)",
			 v->crosscheck_skipped);
		print_wrapped(f, 4, "- ", line);
	} else if (v->sysfs_err) {
		snprintf(line, sizeof(line), "not cross-checked: cannot read /sys/devices/system/cpu: %s",
			 tacho_strerror(v->sysfs_err));
		print_wrapped(f, 4, "- ", line);
	}
	if (v->sysfs && v->sysfs->model_name[0] && info->brand[0] &&
	    strcmp(v->sysfs->model_name, info->brand) != 0) {
		snprintf(line, sizeof(line), "/proc/cpuinfo calls it \"%s\"", v->sysfs->model_name);
		print_wrapped(f, 4, "- ", line);
	}
	/* What CPUID cannot tell, said every time it applies; where to measure it is the
	 * caller's to word (TACHO_HINT_CACHE). */
	hint = tc_hint_words(w, TACHO_HINT_CACHE);
	snprintf(line, sizeof(line), "%s%s%s%s", info->hypervisor_bit ?
		 "cache sizes are what the hypervisor chose to report, not what this guest "
		 "gets of the host's caches; only a measurement tells, a pointer-chasing "
		 "latency curve" :
		 "CPUID describes caches, it does not measure them; a pointer-chasing "
		 "latency curve would show what a program gets",
		 hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
	print_wrapped(f, 4, "- ", line);
}

/* --- JSON --- */

static void json_cache(struct tc_json *j, const struct tacho_cpu_cache *c);

/* "cache_groups" of kind k, only where its CPUs report different caches. */
static void json_cache_groups(struct tc_json *j, const struct tacho_cpu_info *info, unsigned k)
{
	const struct tacho_cpu_cache_group *grp;
	unsigned ngroups = cache_groups_of(info, k, &grp);

	if (!ngroups)
		return;
	tc_json_arr_begin(j, "cache_groups");
	for (unsigned g = 0; g < ngroups; grp++) {
		char cpus[256];

		if (grp->core_type != k)
			continue;
		fmt_cpu_set(grp->cpus, cpus, sizeof(cpus));
		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "cpus", cpus);
		tc_json_uint(j, "ncpus", grp->ncpus);
		tc_json_arr_begin(j, "caches");
		for (unsigned i = 0; i < grp->ncaches; i++)
			json_cache(j, &grp->caches[i]);
		tc_json_arr_end(j);
		tc_json_obj_end(j);
		g++;
	}
	tc_json_arr_end(j);
}

static void json_cache(struct tc_json *j, const struct tacho_cpu_cache *c)
{
	tc_json_obj_begin(j, NULL);
	tc_json_uint(j, "level", c->level);
	tc_json_str(j, "type", tacho_cache_type_name(c->type));
	if (c->size)
		tc_json_uint(j, "size_kib", c->size / 1024);
	else
		tc_json_null(j, "size_kib");
	if (c->ways && !c->fully_assoc)
		tc_json_uint(j, "ways", c->ways);
	else
		tc_json_null(j, "ways");
	tc_json_bool(j, "fully_associative", c->fully_assoc);
	if (c->line_size)
		tc_json_uint(j, "line_bytes", c->line_size);
	else
		tc_json_null(j, "line_bytes");
	if (c->instances >= 0)
		tc_json_int(j, "instances", c->instances);
	else
		tc_json_null(j, "instances");
	if (c->size)
		tc_json_uint(j, "size_bytes", c->size);
	else
		tc_json_null(j, "size_bytes");
	if (c->sharing)
		tc_json_uint(j, "shared_by_threads", c->sharing);
	else
		tc_json_null(j, "shared_by_threads");
	if (c->sets)
		tc_json_uint(j, "sets", c->sets);
	else
		tc_json_null(j, "sets");
	if (c->inclusive >= 0)
		tc_json_bool(j, "inclusive", c->inclusive == 1);
	else
		tc_json_null(j, "inclusive");
	tc_json_str(j, "source", tacho_cpu_source_name(c->source));
	tc_json_obj_end(j);
}

static void json_tlb(struct tc_json *j, const struct tacho_cpu_tlb *l)
{
	char pages[32];

	page_sizes(l->page_sizes, pages, sizeof(pages));
	tc_json_obj_begin(j, NULL);
	tc_json_uint(j, "level", l->level);
	tc_json_str(j, "type", tacho_tlb_type_name(l->type));
	tc_json_str(j, "pages", pages);
	tc_json_uint(j, "entries", l->entries);
	if (l->ways && !l->fully_assoc)
		tc_json_uint(j, "ways", l->ways);
	else
		tc_json_null(j, "ways");
	tc_json_bool(j, "fully_associative", l->fully_assoc);
	tc_json_str(j, "source", tacho_cpu_source_name(l->source));
	tc_json_obj_end(j);
}

static void json_pmu(struct tc_json *j, const struct tacho_cpu_pmu *p, const char *key)
{
	tc_json_obj_begin(j, key);
	tc_json_uint(j, "version", p->version);
	tc_json_uint(j, "gp_counters", p->gp_counters);
	tc_json_uint(j, "gp_width", p->gp_width);
	tc_json_uint(j, "fixed_counters", p->fixed_counters);
	tc_json_uint(j, "fixed_width", p->fixed_width);
	tc_json_uint(j, "arch_events_mask", p->arch_events);
	tc_json_uint(j, "arch_events_length", p->arch_events_len);
	tc_json_bool(j, "amd_perfmon_v2", p->amd_perfmon_v2);
	tc_json_obj_end(j);
}

static int write_json(FILE *f, const struct tacho_cpu_view *v, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	const struct tacho_cpu_info *info = v->info;
	struct tc_json j;
	unsigned n = tacho_cpu_feature_count();

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_str(&j, "dump", v->live ? "live" : "file");
	tc_json_str(&j, "vendor", tacho_cpu_vendor_name(info->vendor));
	tc_json_str(&j, "vendor_string", info->vendor_string);
	tc_json_str(&j, "brand", info->brand);
	tc_json_uint(&j, "family", info->family);
	tc_json_uint(&j, "model", info->model);
	tc_json_uint(&j, "stepping", info->stepping);
	tc_json_uint(&j, "signature", info->signature);
	tc_json_str(&j, "microarchitecture", info->uarch);
	tc_json_uint(&j, "packages", info->topo.packages);
	tc_json_obj_begin(&j, "topology");
	tc_json_uint(&j, "dies_per_package", info->topo.dies_per_package);
	tc_json_uint(&j, "cores_per_package", info->topo.cores_per_package);
	tc_json_uint(&j, "threads_per_package", info->topo.logical_per_package);
	tc_json_uint(&j, "threads_per_core", info->topo.threads_per_core);
	tc_json_uint(&j, "cpus_in_dump", info->ncpus);
	tc_json_bool(&j, "complete", info->topo.complete);
	tc_json_str(&j, "source", tacho_cpu_source_name(info->topo.source));
	tc_json_obj_end(&j);
	tc_json_arr_begin(&j, "core_types");
	for (unsigned k = 0; k < info->ncore_types; k++) {
		const struct tacho_cpu_core_type *ct = &info->core_types[k];
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "kind", tacho_core_kind_name(ct->kind));
		tc_json_uint(&j, "cores", ct->cores);
		tc_json_uint(&j, "threads", ct->threads);
		tc_json_str(&j, "microarchitecture", ct->uarch);
		tc_json_arr_begin(&j, "caches");
		for (unsigned i = 0; i < ct->ncaches; i++)
			json_cache(&j, &ct->caches[i]);
		tc_json_arr_end(&j);
		json_cache_groups(&j, info, k);
		tc_json_arr_begin(&j, "tlbs");
		for (unsigned i = 0; i < ct->ntlbs; i++)
			json_tlb(&j, &ct->tlbs[i]);
		tc_json_arr_end(&j);
		json_pmu(&j, &ct->pmu, "pmu");
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	if (info->hypervisor_bit || info->hypervisor != TACHO_HV_NONE) {
		tc_json_obj_begin(&j, "hypervisor");
		tc_json_str(&j, "name", tacho_hypervisor_name(info->hypervisor));
		tc_json_str(&j, "signature", info->hv_signature);
		tc_json_obj_end(&j);
	} else {
		tc_json_null(&j, "hypervisor");
	}
	tc_json_bool(&j, "virtual_machine", info->hypervisor_bit);
	json_pmu(&j, &info->pmu, "pmu");
	tc_json_obj_begin(&j, "tsc");
	tc_json_bool(&j, "present", info->tsc.present);
	tc_json_bool(&j, "invariant", info->tsc.invariant);
	if (v->tsc_hz > 0) {
		tc_json_uint(&j, "hz", (uint64_t)(v->tsc_hz + 0.5));
		tc_json_str(&j, "source", tacho_tsc_source_name(v->tsc_source));
	} else if (info->tsc.hz) {
		tc_json_uint(&j, "hz", info->tsc.hz);
		tc_json_str(&j, "source", tacho_tsc_source_name(info->tsc.source));
	} else {
		tc_json_null(&j, "hz");
		tc_json_null(&j, "source");
	}
	if (info->tsc.hz)
		tc_json_uint(&j, "cpuid_hz", info->tsc.hz);
	else
		tc_json_null(&j, "cpuid_hz");
	tc_json_obj_end(&j);
	tc_json_arr_begin(&j, "features");
	for (unsigned i = 0; i < n; i++)
		if (has_feature(info, i) && tacho_cpu_feature_name(i))
			tc_json_str(&j, NULL, tacho_cpu_feature_name(i));
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "notes");
	for (unsigned i = 0; i < info->nnotes; i++)
		tc_json_str(&j, NULL, info->notes[i]);
	tc_json_arr_end(&j);
	if (v->crosscheck) {
		tc_json_obj_begin(&j, "crosscheck");
		tc_json_uint(&j, "checked", v->crosscheck->checked);
		tc_json_arr_begin(&j, "disagreements");
		for (unsigned i = 0; i < v->crosscheck->n; i++) {
			tc_json_obj_begin(&j, NULL);
			tc_json_str(&j, "what", v->crosscheck->items[i].what);
			tc_json_str(&j, "text", v->crosscheck->items[i].text);
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
	} else {
		tc_json_null(&j, "crosscheck");
	}
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* The view's first version (TC_OPTS_VALID) ends at info. */
#define TC_OPTS_V1_tacho_cpu_view tc_offsetofend(struct tacho_cpu_view, info)

int tacho_cpu_write(const struct tacho_cpu_view *view, FILE *f, enum tacho_format fmt,
		    const struct tacho_write_opts *opts)
{
	struct tacho_cpu_view v;
	struct tc_write_settings w;
	int err;

	if (!view || !f)
		return -EINVAL;
	err = TC_OPTS_VALID(view, tacho_cpu_view);
	if (err)
		return err;
	if (!view->info || view->info->sz < TC_CPU_INFO_SZ_V1)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	/* the caller's fields, the ones its sz does not cover left 0 */
	TC_OPTS_COPY(&v, view);
	if (v.crosscheck && v.crosscheck->sz < TC_CPU_CROSSCHECK_SZ_V1)
		return -EINVAL;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(f, &v, fmt, &w);
	case TACHO_FORMAT_CSV:
		return -EOPNOTSUPP;   /* a description is not a table */
	default:
		write_table(f, &v, &w);
		return tc_write_status(f);
	}
}
