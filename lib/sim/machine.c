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
};

/* valgrind's predictor as its manual describes it (Cachegrind, "Branch simulation
 * specifics"): callgrind's --branch-sim=yes is the same code. */
static const char branch_model[] =
	"valgrind's: 16384 2-bit counters indexed by the branch's address and the last "
	"few conditional outcomes, and a 512-entry target buffer for indirect branches";

/* The options' first version ends with no_children. */
#define TC_SIM_OPTS_SZ_V1 tc_offsetofend(struct tacho_sim_opts, no_children)

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

int tc_sim_cache_fit(const char *name, const struct tacho_cpu_cache *c,
		     struct tacho_sim_cache *out, char *note, size_t note_size)
{
	uint64_t line, ways, sets, size;
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
	ways = c->fully_assoc || !c->ways ? size / line : c->ways;
	if (!ways)
		ways = 1;
	sets = size / (line * ways);
	if (!sets) {
		sets = 1;
		ways = size / line ? size / line : 1;
	}
	if (!is_pow2(sets)) {
		/* valgrind indexes sets with the address's bits: their number must be a
		 * power of two. Keep the ways and the line, take the largest such count
		 * below, and say so: a smaller cache than the CPU's, never a larger one. */
		uint64_t s = 1;
		while (s * 2 <= sets)
			s *= 2;
		note_add(note, note_size, "%s: %s, %llu-way has %llu sets, not a power of two "
			 "as valgrind needs: simulated as %s (%llu sets)", name,
			 tc_fmt_size(size, b1, sizeof(b1)), (unsigned long long)ways,
			 (unsigned long long)sets,
			 tc_fmt_size(s * line * ways, b2, sizeof(b2)), (unsigned long long)s);
		sets = s;
	}
	out->size = sets * line * ways;
	out->ways = (unsigned)ways;
	out->line_size = (unsigned)line;
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

static int take_caches(struct tacho_sim *s, const struct tacho_cpu_info *info,
		       struct tacho_diag *diag)
{
	const struct tacho_cpu_core_type *ct = &info->core_types[0];
	const struct tacho_cpu_cache *i1, *d1, *ll = NULL;
	int err;

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
	err = tc_sim_cache_fit("I1", i1, &s->pub.i1, s->note, sizeof(s->note));
	if (!err)
		err = tc_sim_cache_fit("D1", d1, &s->pub.d1, s->note, sizeof(s->note));
	if (!err)
		err = tc_sim_cache_fit("LL", ll, &s->pub.ll, s->note, sizeof(s->note));
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

	if (tc_diag_check(diag) || !out || (opts && opts->sz < TC_SIM_OPTS_SZ_V1))
		return -EINVAL;
	*out = NULL;
	if (opts && opts->valgrind)
		vg = opts->valgrind;
	if (opts)
		dump_path = opts->cpu_dump;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->children = !(opts && opts->no_children);
	s->dump_instr = opts && TC_SZ_HAS(opts, struct tacho_sim_opts, dump_instr) && opts->dump_instr;
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
	err = take_caches(s, &info, diag);
	if (err)
		goto out_free;
	s->pub.mcpu = tc_sim_mcpu(info.vendor, info.family, info.model, s->mcpu_why,
				  sizeof(s->mcpu_why));
	s->pub.mcpu_source = s->mcpu_why;
	s->pub.tool = "callgrind";
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

bool tc_sim_children(const struct tacho_sim *sim)
{
	return sim->children;
}

bool tc_sim_dump_instr(const struct tacho_sim *sim)
{
	return sim->dump_instr;
}
