/* mca-profile.c - pipeline analysis of a recording from any source: a function's code
 * cut into basic blocks, the block with the most events given to llvm-mca with this
 * CPU's -mcpu, and the writers of the block beside its measured samples. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "report/code.h"
#include "symbols/symbols.h"
#include "sim/sim.h"
#include "util/util.h"
#include "tacho/cpu.h"
#include "tacho/output.h"
#include "tacho/report.h"
#include "tacho/sim.h"

#define TC_OPTS_V1_tacho_sim_mca_opts tc_offsetofend(struct tacho_sim_mca_opts, cpu_dump)

/* One decoded instruction of the function. */
struct insn {
	uint64_t addr;
	unsigned len;
	bool ends;                   /* a jump, call or return: the block ends after it */
	uint64_t target;             /* a direct jump's or call's target, else 0 */
};

/* Whether the instruction c[0..len) at addr ends a basic block, and its direct target.
 * The opcodes of control transfer (SDM Vol. 2, the one-byte opcode map and Jcc's
 * two-byte forms): Jcc rel8 (70-7F) and rel32 (0F 80-8F), JMP rel8 (EB) and rel32
 * (E9), CALL rel32 (E8), LOOP/JRCXZ (E0-E3), RET (C2, C3, CA, CB), IRET (CF),
 * indirect CALL and JMP (FF /2 to /5), UD2 (0F 0B). Their displacement is the
 * instruction's last bytes. */
static bool ends_block(const uint8_t *c, unsigned len, uint64_t addr, uint64_t *target)
{
	static const uint8_t prefixes[] = { 0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x36,
					    0x64, 0x65, 0xf0 };
	unsigned i = 0;
	uint8_t op;

	*target = 0;
	while (i < len && memchr(prefixes, c[i], sizeof(prefixes)))
		i++;
	if (i < len && (c[i] & 0xf0) == 0x40)    /* REX */
		i++;
	if (i >= len)
		return false;
	op = c[i];
	if ((op >= 0x70 && op <= 0x7f) || op == 0xeb || (op >= 0xe0 && op <= 0xe3)) {
		*target = addr + len + (uint64_t)(int64_t)(int8_t)c[len - 1];
		return true;
	}
	if (op == 0xe8 || op == 0xe9 ||
	    (op == 0x0f && i + 1 < len && c[i + 1] >= 0x80 && c[i + 1] <= 0x8f)) {
		int32_t d;
		if (len < 5)
			return true;
		memcpy(&d, c + len - 4, 4);
		*target = addr + len + (uint64_t)(int64_t)d;
		return true;
	}
	if (op == 0xc2 || op == 0xc3 || op == 0xca || op == 0xcb || op == 0xcf)
		return true;
	if (op == 0xff && i + 1 < len) {
		unsigned reg = (c[i + 1] >> 3) & 7;
		return reg >= 2 && reg <= 5;
	}
	return op == 0x0f && i + 1 < len && c[i + 1] == 0x0b;
}

/* The -mcpu of the CPU of dump (NULL: this one), and how it was chosen. */
static int cpu_mcpu(const char *dump_path, const char **mcpu, char *why, size_t size,
		    struct tacho_diag *diag)
{
	struct tacho_cpuid_dump *dump = NULL;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	int err;

	if (dump_path)
		err = tacho_cpuid_dump_load(dump_path, &dump, diag);
	else if ((err = tacho_cpuid_dump_live(&dump)) != 0)
		tc_diag_set(diag, "CPUID", 0, 0, err, "cannot read this CPU's CPUID: %s",
			    tacho_strerror(err));
	if (!err) {
		err = tacho_cpu_decode(dump, &info);
		if (err)
			tc_diag_set(diag, dump_path ? dump_path : "CPUID", 0, 0, err,
				    "cannot decode the CPU description: %s", tacho_strerror(err));
	}
	if (!err)
		*mcpu = tc_sim_mcpu(info.vendor, info.family, info.model, why, size);
	tacho_cpu_info_exit(&info);
	tacho_cpuid_dump_free(dump);
	return err;
}

/* The function's instructions, decoded from its start up to its end or the first
 * bytes that do not decode (data, padding the decoder does not know). */
static int decode(const struct tc_profile_code *c, struct insn **out, size_t *n)
{
	struct insn *v = calloc(c->len ? c->len : 1, sizeof(*v));
	size_t off = 0, k = 0;

	if (!v)
		return -ENOMEM;
	while (off < c->len) {
		unsigned len = tc_x86_insn_len(c->bytes + off, c->len - off);
		if (!len)
			break;
		v[k].addr = c->start + off;
		v[k].len = len;
		v[k].ends = ends_block(c->bytes + off, len, v[k].addr, &v[k].target);
		k++;
		off += len;
	}
	*out = v;
	*n = k;
	return 0;
}

/* The basic block of insns[0..n) with the most events: [*first, *last]. */
static void hottest_block(const struct tc_profile_code *c, const struct insn *insns, size_t n,
			  size_t *first, size_t *last, uint64_t *best)
{
	bool *leader = calloc(n ? n : 1, sizeof(*leader));
	size_t b = 0, r = 0;
	uint64_t sum = 0;

	*first = *last = 0;
	*best = 0;
	if (!leader)
		return;
	leader[0] = true;
	for (size_t i = 0; i < n; i++) {
		if (insns[i].ends && i + 1 < n)
			leader[i + 1] = true;
		/* a direct target inside the function starts a block (by binary search) */
		if (insns[i].target >= insns[0].addr && insns[i].target <= insns[n - 1].addr) {
			size_t lo = 0, hi = n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (insns[mid].addr < insns[i].target)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < n && insns[lo].addr == insns[i].target)
				leader[lo] = true;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (leader[i]) {
			b = i;
			sum = 0;
		}
		/* the sampled rows are in address order, as the instructions */
		while (r < c->nrows && c->rows[r].address < insns[i].addr)
			r++;
		if (r < c->nrows && c->rows[r].address == insns[i].addr)
			sum += c->rows[r].events;
		if ((i + 1 == n || leader[i + 1]) && sum > *best) {
			*best = sum;
			*first = b;
			*last = i;
		}
	}
	free(leader);
}

int tacho_sim_mca_profile(struct tacho_profile *p, const char *symbol,
			  const struct tacho_sim_mca_opts *caller_opts,
			  struct tacho_sim_mca **out, struct tacho_diag *diag)
{
	struct tacho_sim_mca_opts opts = { .sz = sizeof(opts) };
	struct tacho_profile_info in = { .sz = sizeof(in) };
	struct tc_profile_code c;
	struct tacho_sim_mca *m = NULL;
	struct insn *insns = NULL;
	size_t n = 0, first, last, k, r = 0;
	const char *mcpu = NULL;
	char why[256];
	uint64_t best;
	int err;

	if (tc_diag_check(diag) || !p || !symbol || !out)
		return -EINVAL;
	*out = NULL;
	err = TC_OPTS_VALID_DIAG(caller_opts, tacho_sim_mca_opts, diag);
	if (err)
		return err;
	TC_OPTS_COPY(&opts, caller_opts);
	err = tc_profile_code(p, symbol, &c, diag);
	if (err == -ENOENT)
		return tc_diag_set(diag, symbol, 0, 0, err, "no samples in a function named '%s'",
				   symbol);
	if (err)
		return err;
	tacho_profile_info(p, &in);
	err = decode(&c, &insns, &n);
	if (err)
		goto out;
	hottest_block(&c, insns, n, &first, &last, &best);
	if (!best) {
		err = tc_diag_set(diag, symbol, 0, 0, -TACHO_ENOVALUE, "no sample of %s falls on "
				  "an instruction tacho could decode", symbol);
		goto out;
	}
	err = cpu_mcpu(opts.cpu_dump, &mcpu, why, sizeof(why), diag);
	if (err)
		goto out;
	k = last - first + 1;
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	m->object = tc_strdup(c.dso);
	m->function = tc_strdup(c.symbol);
	m->mcpu_source = tc_strdup(why);
	m->addrs = calloc(k, sizeof(*m->addrs));
	m->samples = calloc(k, sizeof(*m->samples));
	m->events = calloc(k, sizeof(*m->events));
	if (!m->object || !m->function || !m->mcpu_source || !m->addrs || !m->samples ||
	    !m->events) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < k; i++) {
		m->addrs[i] = insns[first + i].addr;
		while (r < c.nrows && c.rows[r].address < m->addrs[i])
			r++;
		if (r < c.nrows && c.rows[r].address == m->addrs[i]) {
			m->samples[i] = c.rows[r].samples;
			m->events[i] = c.rows[r].events;
			m->pub.block_samples += m->samples[i];
			m->pub.block_events += m->events[i];
		}
	}
	m->pub.object = m->object;
	m->pub.function = m->function;
	m->pub.address = insns[first].addr;
	m->pub.mcpu_source = m->mcpu_source;
	m->pub.insn_addresses = m->addrs;
	m->pub.insn_samples = m->samples;
	m->pub.insn_events = m->events;
	m->pub.function_samples = c.samples;
	m->pub.function_events = c.events;
	m->pub.simulated = in.simulated;
	/* a basic block runs all its instructions equally often: with simulated
	 * instructions, the count at its first is how often it ran */
	if (in.simulated && in.event && !strcmp(in.event, "instructions"))
		m->pub.executions = m->events[0];
	err = tc_sim_mca_analyse(m, c.bytes + (insns[first].addr - c.start),
				 (size_t)(insns[last].addr + insns[last].len - insns[first].addr),
				 k, mcpu, diag);
	if (err)
		goto out;
	*out = m;
	m = NULL;
out:
	tacho_sim_mca_free(m);
	free(insns);
	tc_profile_code_exit(&c);
	return err;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int write_table(const struct tacho_sim_mca_info *m, FILE *f)
{
	const char *what = m->simulated ? "simulated" : "samples";
	struct tc_table *t = tc_table_new(3);
	uint64_t blk = m->simulated ? m->block_events : m->block_samples;
	uint64_t fn = m->simulated ? m->function_events : m->function_samples;
	int err;

	if (!t)
		return -ENOMEM;
	fputs("# the hottest basic block of ", f);
	tc_fputs_printable(m->function, f);
	fputs(" in ", f);
	tc_fputs_printable(m->object, f);
	fprintf(f, ": %zu instructions at %#" PRIx64 ", %" PRIu64 " of its %" PRIu64 " %s "
		"(%.2f%%)", m->ninsns, m->address, blk, fn, what, pct(blk, fn));
	if (m->executions)
		fprintf(f, ", run %" PRIu64 " times", m->executions);
	fputc('\n', f);
	tc_table_align_right(t, 1, true);
	err = tc_table_addf(t, "address\t%s\tinstruction", what);
	for (size_t i = 0; i < m->ninsns && !err; i++) {
		uint64_t v = m->simulated ? m->insn_events[i] : m->insn_samples[i];
		err = tc_table_addf(t, "%#" PRIx64 "\t%" PRIu64 "\t%s", m->insn_addresses[i], v,
				    m->insns[i]);
	}
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	if (err)
		return err;
	fprintf(f, "llvm-mca -mcpu=%s (%s): IPC %.2f, %.2f cycles per iteration (block "
		"throughput), dispatch width %u\n", m->mcpu, m->mcpu_source, m->ipc,
		m->block_rthroughput, m->dispatch_width);
	fputs("resource pressure per iteration:", f);
	for (size_t i = 0; i < m->nresources; i++)
		if (m->resource_pressure[i] > 0)
			fprintf(f, " %s %.2f", m->resource_names[i], m->resource_pressure[i]);
	fputc('\n', f);
	fputs(m->bottleneck, f);
	if (m->bottleneck[0])
		fputc('\n', f);
	return 0;
}

static int write_json(const struct tacho_sim_mca_info *m, FILE *f, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_str(&j, "symbol", m->function);
	tc_json_str(&j, "dso", m->object);
	if (m->simulated)
		tc_json_str(&j, "status", "simulated");
	tc_json_uint(&j, "address", m->address);
	tc_json_uint(&j, "samples", m->block_samples);
	tc_json_uint(&j, "events", m->block_events);
	tc_json_uint(&j, "function_samples", m->function_samples);
	tc_json_uint(&j, "function_events", m->function_events);
	if (m->executions)
		tc_json_uint(&j, "executions", m->executions);
	else
		tc_json_null(&j, "executions");
	tc_json_str(&j, "bytes", m->bytes);
	tc_json_arr_begin(&j, "instructions");
	for (size_t i = 0; i < m->ninsns; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "address", m->insn_addresses[i]);
		tc_json_str(&j, "text", m->insns[i]);
		tc_json_uint(&j, "samples", m->insn_samples[i]);
		tc_json_uint(&j, "events", m->insn_events[i]);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_str(&j, "mcpu", m->mcpu);
	tc_json_str(&j, "mcpu_source", m->mcpu_source);
	tc_json_double(&j, "ipc", m->ipc);
	tc_json_double(&j, "block_rthroughput", m->block_rthroughput);
	tc_json_uint(&j, "dispatch_width", m->dispatch_width);
	tc_json_arr_begin(&j, "resources");
	for (size_t i = 0; i < m->nresources; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", m->resource_names[i]);
		tc_json_double(&j, "pressure", m->resource_pressure[i]);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_str(&j, "bottleneck", m->bottleneck);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

int tacho_sim_mca_write(const struct tacho_sim_mca *mca, FILE *f, enum tacho_format fmt,
			const struct tacho_write_opts *opts)
{
	const struct tacho_sim_mca_info *m = tacho_sim_mca_info(mca);
	struct tc_write_settings w;
	int err;

	if (!m || !f || !m->insn_addresses)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(m, f, fmt, &w);
	case TACHO_FORMAT_TABLE:
		err = write_table(m, f);
		return err ? err : tc_write_status(f);
	default:
		return -EINVAL;
	}
}
