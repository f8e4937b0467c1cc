/* machine.c - the simulator and the machine it simulates: valgrind found in PATH, the
 * caches of the CPU's description (CPUID of this CPU, or a dump) fitted to what
 * valgrind's cache model accepts, its branch predictor in words. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/sim.h"
#include "util/util.h"
#include "tacho/cpu.h"
#include "tacho/sim.h"

struct tacho_sim {
	struct tacho_sim_machine pub;
	char *valgrind;          /* the path that runs */
	char source[256];
	char note[512];
	char mcpu_why[160];
	bool children;
	bool dump_instr;
	enum tacho_sim_engine engine;
};

/* valgrind's predictor as its manual describes it (Cachegrind, "Branch simulation
 * specifics"): callgrind's --branch-sim=yes is the same code. */
static const char branch_model[] =
	"valgrind's: 16384 2-bit counters indexed by the branch's address and the last "
	"few conditional outcomes, and a 512-entry target buffer for indirect branches";

/* The options' first version ends with no_children. */
#define TC_OPTS_V1_tacho_sim_opts tc_offsetofend(struct tacho_sim_opts, no_children)

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static void note_add(char *note, size_t size, const char *fmt, ...) TC_PRINTF(3, 4);
static void note_add(char *note, size_t size, const char *fmt, ...)
{
	size_t len = strlen(note);
	va_list ap;

	if (len + 3 >= size)
		return;
	if (len) {
		strcpy(note + len, "; ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(note + len, size - len, fmt, ap);
	va_end(ap);
}

/* The associativity tacho gives valgrind for a cache whose ways neither CPUID nor the
 * kernel states: 8 at level 1, 16 beyond, within a factor of two of what the x86 cores
 * of the last decade have (L1 8 or 12 ways, L2 4 to 16, L3 11 to 20). Never "fully
 * associative": valgrind searches a set's ways one by one, and a 32 MiB cache of one
 * set is 524,288 ways to search at each access that reaches it (with the 508 MiB L3 of
 * a bhyve guest so, a gzip of 1 MB took 101 s of CPU where bare callgrind takes 3.2). */
static unsigned default_ways(unsigned level)
{
	return level <= 1 ? 8 : 16;
}

static uint64_t floor_pow2(uint64_t v)
{
	while (v & (v - 1))
		v &= v - 1;
	return v;
}

/* valgrind 3.19 reads --I1/--D1/--LL into ints (cg_arch.c, parse_cache_opt: "One of the
 * cache parameters was too large and overflowed"). */
#define VG_MAX_SIZE 0x7fffffffull

int tc_sim_cache_fit(const char *name, const struct tacho_cpu_cache *c, unsigned kernel_ways,
		     struct tacho_sim_cache *out, char *note, size_t note_size)
{
	uint64_t line, ways, sets, size, lines;
	char b1[32], b2[32];

	if (!c || !c->size || !c->line_size)
		return -TACHO_ENOVALUE;
	line = c->line_size;
	size = c->size;
	if (!is_pow2(line) || line < 16) {
		/* valgrind simulates lines of 16 bytes or more, a power of two */
		uint64_t l = 16;
		while (l * 2 <= line)
			l *= 2;
		note_add(note, note_size, "%s: %llu-byte lines simulated as %llu", name,
			 (unsigned long long)line, (unsigned long long)l);
		line = l;
	}
	lines = size / line ? size / line : 1;
	if (c->fully_assoc) {
		ways = lines;       /* CPUID says so: one set */
	} else if (c->ways) {
		ways = c->ways;
	} else if (kernel_ways) {
		/* AMD's leaf 8000_0006h code 9 ("see leaf 8000_001Dh") with that leaf
		 * empty, a hypervisor's zero: the kernel read the cache elsewhere */
		ways = kernel_ways;
		note_add(note, note_size, "%s: CPUID gives no associativity: %llu-way as the "
			 "kernel says (sysfs)", name, (unsigned long long)ways);
	} else {
		ways = default_ways(c->level);
		note_add(note, note_size, "%s: CPUID gives no associativity: simulated as "
			 "%llu-way, tacho's default for a level-%u cache", name,
			 (unsigned long long)ways, c->level);
	}
	if (ways > lines)
		ways = lines;
	sets = lines / ways;
	if (!is_pow2(sets) || sets * ways != lines) {
		/* valgrind indexes sets with the address's bits: their number must be a
		 * power of two (its manual, "Cache Simulation Specifics"). Take the power of
		 * two below and as many more ways as keep the size: valgrind's own rule
		 * for a cache it detects (cg_arch.c, maybe_tweak_LLc), which changes
		 * the associativity rather than the size, since the capacity decides
		 * which working sets fit and the ways beyond a few matter little. At
		 * most twice the ways; the size moves by half a way at most. */
		uint64_t s = floor_pow2(sets), w = (lines + s / 2) / s;
		char n[32];

		if (lines % ways)
			snprintf(n, sizeof(n), "%.2f", (double)lines / (double)ways);
		else
			snprintf(n, sizeof(n), "%llu", (unsigned long long)sets);
		note_add(note, note_size, "%s: %s, %llu-way has %s sets, not a power of "
			 "two as valgrind needs: simulated as %s, %llu-way (%llu sets)", name,
			 tc_fmt_size(size, b1, sizeof(b1)), (unsigned long long)ways, n,
			 tc_fmt_size(s * w * line, b2, sizeof(b2)), (unsigned long long)w,
			 (unsigned long long)s);
		sets = s;
		ways = w;
	}
	if (sets * ways * line > VG_MAX_SIZE) {
		/* beyond what valgrind's options hold: fewer sets, the same ways */
		uint64_t s = sets;
		while (s > 1 && s * ways * line > VG_MAX_SIZE)
			s /= 2;
		note_add(note, note_size, "%s: %s is more than valgrind takes (2 GiB less a "
			 "byte): simulated as %s", name,
			 tc_fmt_size(sets * ways * line, b1, sizeof(b1)),
			 tc_fmt_size(s * ways * line, b2, sizeof(b2)));
		sets = s;
	}
	out->size = sets * line * ways;
	out->ways = (unsigned)ways;
	out->line_size = (unsigned)line;
	return 0;
}

unsigned tc_sim_kernel_ways(const struct tacho_cpu_sysfs *sys, int cpu,
			    const struct tacho_cpu_cache *c)
{
	static const char *const types[] = { [TACHO_CACHE_DATA] = "data",
					     [TACHO_CACHE_INSTRUCTION] = "instruction",
					     [TACHO_CACHE_UNIFIED] = "unified" };
	const struct tacho_sysfs_cpu *k = NULL;

	if (!sys || !c || (unsigned)c->type >= ARRAY_SIZE(types) || !types[c->type])
		return 0;
	if (cpu >= 0)
		k = tacho_cpu_sysfs_cpu(sys, cpu);
	for (unsigned i = 0; !k && i < sys->ncpus; i++)
		if (sys->cpus[i].ncaches)
			k = &sys->cpus[i];
	if (!k)
		return 0;
	for (unsigned i = 0; i < k->ncaches; i++)
		if (k->caches[i].level == c->level && !strcmp(k->caches[i].type, types[c->type]))
			return k->caches[i].ways;
	return 0;
}

/* The first cache of a level and type (any type when type is 0: the last level). */
static const struct tacho_cpu_cache *find_cache(const struct tacho_cpu_core_type *ct,
						unsigned level, enum tacho_cache_type type)
{
	for (unsigned i = 0; i < ct->ncaches; i++)
		if (ct->caches[i].level == level && (!type || ct->caches[i].type == type))
			return &ct->caches[i];
	return NULL;
}

/* The kernel's ways of cache c of the live machine (0: none), read from sysfs the first
 * time a cache needs them, into *sys (*sys_err keeps a failure from being retried). */
static unsigned live_kernel_ways(const struct tacho_cpu_info *info, const struct tacho_cpu_cache *c,
				 struct tacho_cpu_sysfs **sys, int *sys_err)
{
	const struct tacho_cpu_core_type *ct = &info->core_types[0];
	int cpu = -1;

	if (c->ways || c->fully_assoc)
		return 0;
	if (!*sys && !*sys_err) {
		*sys_err = tacho_cpu_sysfs_read_for(NULL, info, sys);
		if (*sys_err)
			tc_log(TACHO_LOG_DEBUG, "sim: no kernel view of the caches: %s",
			       tacho_strerror(*sys_err));
	}
	if (info->cpus && ct->first_cpu < info->ncpus)
		cpu = info->cpus[ct->first_cpu].os_cpu;
	return tc_sim_kernel_ways(*sys, cpu, c);
}

/* live: the description is this machine's, whose kernel may know the ways CPUID
 * leaves out */
static int take_caches(struct tacho_sim *s, const struct tacho_cpu_info *info, bool live,
		       struct tacho_diag *diag)
{
	const struct tacho_cpu_core_type *ct = &info->core_types[0];
	const struct tacho_cpu_cache *i1, *d1, *ll = NULL;
	const struct tacho_cpu_cache *c[3];
	struct tacho_sim_cache *out[3] = { &s->pub.i1, &s->pub.d1, &s->pub.ll };
	static const char *const names[3] = { "I1", "D1", "LL" };
	struct tacho_cpu_sysfs *sys = NULL;
	int err = 0, sys_err = 0;

	if (!info->ncore_types)
		return tc_diag_set(diag, s->source, 0, 0, -TACHO_ENOVALUE,
				   "the CPU description has no caches");
	i1 = find_cache(ct, 1, TACHO_CACHE_INSTRUCTION);
	d1 = find_cache(ct, 1, TACHO_CACHE_DATA);
	/* the last level: valgrind simulates two levels, and the misses that cost most
	 * are the last level's (its manual says the same of its own choice) */
	for (unsigned i = 0; i < ct->ncaches; i++)
		if (ct->caches[i].level >= 2 && ct->caches[i].type == TACHO_CACHE_UNIFIED &&
		    (!ll || ct->caches[i].level > ll->level))
			ll = &ct->caches[i];
	if (!i1 || !d1 || !ll)
		return tc_diag_set(diag, s->source, 0, 0, -TACHO_ENOVALUE,
				   "the CPU description lacks the %s cache that valgrind "
				   "simulates", !i1 ? "L1 instruction" : !d1 ? "L1 data" :
				   "last-level");
	c[0] = i1;
	c[1] = d1;
	c[2] = ll;
	for (int i = 0; i < 3 && !err; i++) {
		unsigned kw = live ? live_kernel_ways(info, c[i], &sys, &sys_err) : 0;
		err = tc_sim_cache_fit(names[i], c[i], kw, out[i], s->note, sizeof(s->note));
	}
	tacho_cpu_sysfs_free(sys);
	if (err)
		return tc_diag_set(diag, s->source, 0, 0, err, "a cache of the CPU description "
				   "has no size or no line size");
	return 0;
}

/* valgrind: a path, or a name looked up in PATH as execvp would. */
static int find_valgrind(const char *name, char **out, struct tacho_diag *diag)
{
	int err = tc_path_lookup(name, out);

	if (!err || err == -ENOMEM)
		return err;
	tc_diag_set(diag, name, 0, 0, -TACHO_ENOSIM,
		    "valgrind is not installed: no '%s' %s (install the Debian package "
		    "valgrind)", name, strchr(name, '/') ? "that can be run" : "in PATH");
	return -TACHO_ENOSIM;
}

int tacho_sim_new(const struct tacho_sim_opts *opts, struct tacho_sim **out,
		  struct tacho_diag *diag)
{
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	struct tacho_cpuid_dump *dump = NULL;
	const char *vg = "valgrind", *dump_path = NULL;
	struct tacho_sim *s;
	int err;

	if (tc_diag_check(diag) || !out)
		return -EINVAL;
	*out = NULL;
	err = TC_OPTS_VALID_DIAG(opts, tacho_sim_opts, diag);
	if (err)
		return err;
	if (opts && opts->valgrind)
		vg = opts->valgrind;
	dump_path = TC_OPTS_GET(opts, tacho_sim_opts, cpu_dump, NULL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->children = !TC_OPTS_GET(opts, tacho_sim_opts, no_children, false);
	s->dump_instr = TC_OPTS_GET(opts, tacho_sim_opts, dump_instr, false);
	s->engine = TC_OPTS_GET(opts, tacho_sim_opts, engine, TACHO_SIM_ENGINE_AUTO);
	if ((unsigned)s->engine > TACHO_SIM_ENGINE_CACHEGRIND ||
	    (s->engine == TACHO_SIM_ENGINE_CACHEGRIND && s->dump_instr)) {
		err = tc_diag_set(diag, "tacho_sim_opts", 0, 0, -EINVAL,
				  s->dump_instr && s->engine == TACHO_SIM_ENGINE_CACHEGRIND
					  ? "cachegrind keeps no per-instruction costs: "
					    "dump_instr needs callgrind"
					  : "an engine this library does not know");
		goto out_free;
	}
	err = find_valgrind(vg, &s->valgrind, diag);
	if (err)
		goto out_free;
	if (dump_path) {
		err = tacho_cpuid_dump_load(dump_path, &dump, diag);
		if (err) {
			/* the message names the file (and the line) it is about */
			char where[600];
			if (tacho_diag_format(diag, where, sizeof(where)) >= 0)
				tc_diag_set(diag, dump_path, 0, 0, err, "the CPU dump %s", where);
			goto out_free;
		}
	} else {
		err = tacho_cpuid_dump_live(&dump);
		if (err) {
			tc_diag_set(diag, "CPUID", 0, 0, err, "cannot read this CPU's CPUID: %s",
				    tacho_strerror(err));
			goto out_free;
		}
	}
	err = tacho_cpu_decode(dump, &info);
	if (err) {
		tc_diag_set(diag, dump_path ? dump_path : "CPUID", 0, 0, err,
			    "cannot decode the CPU description: %s", tacho_strerror(err));
		goto out_free;
	}
	snprintf(s->source, sizeof(s->source), "%s%s (%s)",
		 dump_path ? "the CPUID dump " : "CPUID of this CPU", dump_path ? dump_path : "",
		 info.brand[0] ? info.brand : tacho_cpu_vendor_name(info.vendor));
	err = take_caches(s, &info, !dump_path, diag);
	if (err)
		goto out_free;
	s->pub.mcpu = tc_sim_mcpu(info.vendor, info.family, info.model, s->mcpu_why,
				  sizeof(s->mcpu_why));
	s->pub.mcpu_source = s->mcpu_why;
	s->pub.tool = s->engine == TACHO_SIM_ENGINE_CACHEGRIND ? "cachegrind" : "callgrind";
	s->pub.source = s->source;
	s->pub.note = s->note;
	s->pub.branch_model = branch_model;
	*out = s;
	s = NULL;
out_free:
	tacho_cpu_info_exit(&info);
	tacho_cpuid_dump_free(dump);
	tacho_sim_free(s);
	return err;
}

void tacho_sim_free(struct tacho_sim *sim)
{
	if (!sim)
		return;
	free(sim->valgrind);
	free(sim);
}

const struct tacho_sim_machine *tacho_sim_machine(const struct tacho_sim *sim)
{
	return sim ? &sim->pub : NULL;
}

const char *tc_sim_valgrind(const struct tacho_sim *sim)
{
	return sim->valgrind;
}

enum tacho_sim_engine tc_sim_engine(const struct tacho_sim *sim)
{
	return sim->engine;
}

bool tc_sim_children(const struct tacho_sim *sim)
{
	return sim->children;
}

bool tc_sim_dump_instr(const struct tacho_sim *sim)
{
	return sim->dump_instr;
}
