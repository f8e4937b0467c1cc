/* mca.c - pipeline analysis of the hottest basic block of a simulated run: the block
 * found in callgrind's per-instruction counts, its bytes read from the binary, llvm-mc
 * to disassemble them and llvm-mca with this CPU's -mcpu to predict its throughput,
 * IPC, resource pressure and bottleneck; the CPUID-to-mcpu table. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "sim/sim.h"
#include "util/util.h"
#include "tacho/cpu.h"
#include "tacho/run.h"
#include "tacho/sim.h"

/* --- -mcpu from CPUID: llvm 14's x86 models, by family and model --- */

struct mcpu_entry {
	enum tacho_cpu_vendor vendor;
	unsigned family, model_lo, model_hi;
	const char *mcpu, *name;
};

/* Intel's display models (SDM Vol. 4, table 2-1) and AMD's families (the Processor
 * Programming References). A newer CPU than llvm 14 models takes the closest older
 * model it has (Zen 4 as znver3, Raptor Lake as alderlake), said in the name. */
static const struct mcpu_entry mcpu_table[] = {
	{ TACHO_VENDOR_AMD, 0x17, 0x00, 0x2f, "znver1", "Zen, Zen+" },
	{ TACHO_VENDOR_AMD, 0x17, 0x30, 0xff, "znver2", "Zen 2" },
	{ TACHO_VENDOR_AMD, 0x19, 0x00, 0x0f, "znver3", "Zen 3" },
	{ TACHO_VENDOR_AMD, 0x19, 0x10, 0x1f, "znver3", "Zen 4 (llvm 14 has no znver4)" },
	{ TACHO_VENDOR_AMD, 0x19, 0x20, 0x5f, "znver3", "Zen 3" },
	{ TACHO_VENDOR_AMD, 0x19, 0x60, 0xaf, "znver3", "Zen 4 (llvm 14 has no znver4)" },
	{ TACHO_VENDOR_INTEL, 6, 0x2a, 0x2a, "sandybridge", "Sandy Bridge" },
	{ TACHO_VENDOR_INTEL, 6, 0x2d, 0x2d, "sandybridge", "Sandy Bridge-E" },
	{ TACHO_VENDOR_INTEL, 6, 0x3a, 0x3a, "ivybridge", "Ivy Bridge" },
	{ TACHO_VENDOR_INTEL, 6, 0x3e, 0x3e, "ivybridge", "Ivy Bridge-E" },
	{ TACHO_VENDOR_INTEL, 6, 0x3c, 0x3c, "haswell", "Haswell" },
	{ TACHO_VENDOR_INTEL, 6, 0x3f, 0x3f, "haswell", "Haswell-E" },
	{ TACHO_VENDOR_INTEL, 6, 0x45, 0x46, "haswell", "Haswell" },
	{ TACHO_VENDOR_INTEL, 6, 0x3d, 0x3d, "broadwell", "Broadwell" },
	{ TACHO_VENDOR_INTEL, 6, 0x47, 0x47, "broadwell", "Broadwell" },
	{ TACHO_VENDOR_INTEL, 6, 0x4f, 0x4f, "broadwell", "Broadwell-E" },
	{ TACHO_VENDOR_INTEL, 6, 0x56, 0x56, "broadwell", "Broadwell-DE" },
	{ TACHO_VENDOR_INTEL, 6, 0x4e, 0x4e, "skylake", "Skylake" },
	{ TACHO_VENDOR_INTEL, 6, 0x5e, 0x5e, "skylake", "Skylake" },
	{ TACHO_VENDOR_INTEL, 6, 0x8e, 0x8e, "skylake", "Kaby/Coffee/Whiskey Lake" },
	{ TACHO_VENDOR_INTEL, 6, 0x9e, 0x9e, "skylake", "Kaby/Coffee Lake" },
	{ TACHO_VENDOR_INTEL, 6, 0xa5, 0xa6, "skylake", "Comet Lake" },
	{ TACHO_VENDOR_INTEL, 6, 0x55, 0x55, "skylake-avx512", "Skylake-SP, Cascade Lake" },
	{ TACHO_VENDOR_INTEL, 6, 0x6a, 0x6a, "icelake-server", "Ice Lake-SP" },
	{ TACHO_VENDOR_INTEL, 6, 0x6c, 0x6c, "icelake-server", "Ice Lake-D" },
	{ TACHO_VENDOR_INTEL, 6, 0x7d, 0x7e, "icelake-client", "Ice Lake" },
	{ TACHO_VENDOR_INTEL, 6, 0x8c, 0x8d, "icelake-client", "Tiger Lake (as Ice Lake)" },
	{ TACHO_VENDOR_INTEL, 6, 0x97, 0x9a, "alderlake", "Alder Lake" },
	{ TACHO_VENDOR_INTEL, 6, 0xb7, 0xb7, "alderlake", "Raptor Lake (as Alder Lake)" },
	{ TACHO_VENDOR_INTEL, 6, 0xba, 0xba, "alderlake", "Raptor Lake (as Alder Lake)" },
	{ TACHO_VENDOR_INTEL, 6, 0xbf, 0xbf, "alderlake", "Raptor Lake (as Alder Lake)" },
	{ TACHO_VENDOR_INTEL, 6, 0x8f, 0x8f, "sapphirerapids", "Sapphire Rapids" },
};

const char *tc_sim_mcpu(enum tacho_cpu_vendor vendor, unsigned family, unsigned model,
			char *why, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(mcpu_table); i++) {
		const struct mcpu_entry *e = &mcpu_table[i];
		if (e->vendor == vendor && e->family == family && model >= e->model_lo &&
		    model <= e->model_hi) {
			snprintf(why, size, "%s family 0x%x model 0x%x: %s",
				 tacho_cpu_vendor_name(vendor), family, model, e->name);
			return e->mcpu;
		}
	}
	/* the fallback: llvm's generic x86-64 model (its scheduling model is Sandy
	 * Bridge's), which predicts something for any x86-64 code */
	snprintf(why, size, "%s family 0x%x model 0x%x is not in tacho's table: llvm's "
		 "generic x86-64", tacho_cpu_vendor_name(vendor), family, model);
	return "x86-64";
}

/* --- the block --- */

#define CODE_MAX (256 * 1024)    /* bytes of code read around the hottest instruction */

void tacho_sim_mca_free(struct tacho_sim_mca *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->pub.ninsns; i++)
		free(m->insns[i]);
	for (size_t i = 0; i < m->pub.nresources; i++)
		free(m->res_names[i]);
	free(m->insns);
	free(m->res_names);
	free(m->res_pressure);
	free(m->object);
	free(m->function);
	free(m->bytes);
	free(m->report);
	free(m->bottleneck);
	free(m->mcpu);
	free(m->mcpu_source);
	free(m->addrs);
	free(m->samples);
	free(m->events);
	free(m);
}

const struct tacho_sim_mca_info *tacho_sim_mca_info(const struct tacho_sim_mca *m)
{
	return m ? &m->pub : NULL;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct tacho_sim_row *x = a, *y = b;

	return x->address < y->address ? -1 : x->address > y->address;
}

/* The bytes at ELF address vaddr of an ELF file: 0 and buf[0..*n) (at most size), or
 * -TACHO_ENOVALUE with *diag. callgrind writes an instruction's address relative to its
 * binary's load bias: the ELF address, for a position-independent binary too. */
static int read_code(const char *path, uint64_t vaddr, uint8_t *buf, size_t size, size_t *n,
		     struct tacho_diag *diag)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return tc_diag_set(diag, path, 0, 0, -TACHO_ENOVALUE, "cannot read the block's "
				   "binary: %s", tacho_strerror(-errno));
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr)) {
		err = tc_diag_set(diag, path, 0, 0, -TACHO_ENOVALUE, "the block's binary is not "
				  "a 64-bit ELF file");
		goto out;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr >= ph.p_vaddr + ph.p_filesz)
			continue;
		size_t want = (size_t)(ph.p_vaddr + ph.p_filesz - vaddr);
		ssize_t got;
		if (want > size)
			want = size;
		got = pread(fd, buf, want, (off_t)(ph.p_offset + (vaddr - ph.p_vaddr)));
		if (got <= 0)
			break;
		*n = (size_t)got;
		goto out;
	}
	err = tc_diag_set(diag, path, 0, 0, -TACHO_ENOVALUE, "the block's address 0x%llx is "
			  "in no loaded segment of its binary", (unsigned long long)vaddr);
out:
	close(fd);
	return err;
}

/* A program in PATH, as execvp would find it: a malloc'd path, or NULL. */
static char *which(const char *name)
{
	char *path = NULL;

	return tc_path_lookup(name, &path) ? NULL : path;
}

/* Runs argv and waits: 0 when it exited 0. */
static int run_tool(char *const argv[], struct tacho_diag *diag)
{
	struct tacho_child_opts co = { .sz = sizeof(co) };
	struct tacho_child *ch;
	struct tacho_exit ex;
	char how[64];
	int err = tacho_child_start(argv, &co, &ch), exec_err = 0;

	if (!err)
		err = tacho_child_exec(ch, &exec_err);
	if (!err)
		err = tacho_child_wait(ch, &ex);
	tacho_child_free(ch);
	if (err)
		return tc_diag_set(diag, argv[0], 0, 0, err == -TACHO_ENOSTART ? -TACHO_ENOSIM : err,
				   "cannot run %s: %s", argv[0], tacho_strerror(exec_err ? -exec_err
										  : err));
	if (ex.status)
		return tc_diag_set(diag, argv[0], 0, 0, -TACHO_EPARSE, "%s %s", argv[0],
				   tacho_exit_describe(&ex, how, sizeof(how)));
	return 0;
}

/* The value after "Key:" in llvm-mca's summary. */
static bool summary_value(const char *report, const char *key, double *out)
{
	const char *p = strstr(report, key);

	return p && sscanf(p + strlen(key), " %lf", out) == 1;
}

/* "Resources:" names ("[12.0] - Zn3FPP45") and "Resource pressure per iteration:" (a
 * line of indices, then a line of cycles or "-"). */
static int parse_resources(struct tacho_sim_mca *m, const char *report)
{
	const char *r = strstr(report, "\nResources:\n"), *pp;
	size_t n = 0;

	if (!r)
		return -TACHO_EPARSE;
	r += strlen("\nResources:\n");
	for (const char *l = r; *l == '['; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
		n++;
	pp = strstr(report, "Resource pressure per iteration:\n");
	if (!n || !pp)
		return -TACHO_EPARSE;
	m->res_names = calloc(n, sizeof(*m->res_names));
	m->res_pressure = calloc(n, sizeof(*m->res_pressure));
	if (!m->res_names || !m->res_pressure)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *dash = strstr(r, "- "), *end = strchr(r, '\n');
		if (!dash || !end || dash > end)
			return -TACHO_EPARSE;
		m->res_names[i] = tc_strndup(dash + 2, (size_t)(end - dash - 2));
		if (!m->res_names[i])
			return -ENOMEM;
		tc_trim(m->res_names[i]);
		m->pub.nresources = i + 1;
		r = end + 1;
	}
	/* skip the line of indices; then one field per resource */
	pp = strchr(pp + strlen("Resource pressure per iteration:\n"), '\n');
	if (!pp)
		return -TACHO_EPARSE;
	pp++;
	for (size_t i = 0; i < n; i++) {
		char *end;
		while (*pp == ' ')
			pp++;
		if (*pp == '-') {
			m->res_pressure[i] = 0;
			pp++;
			continue;
		}
		m->res_pressure[i] = strtod(pp, &end);
		if (end == pp)
			return -TACHO_EPARSE;
		pp = end;
	}
	return 0;
}

static int parse_report(struct tacho_sim_mca *m, const char *report)
{
	double ipc, rt, dw;
	const char *b;

	if (!summary_value(report, "IPC:", &ipc) || !summary_value(report, "Block RThroughput:", &rt) ||
	    !summary_value(report, "Dispatch Width:", &dw))
		return -TACHO_EPARSE;
	m->pub.ipc = ipc;
	m->pub.block_rthroughput = rt;
	m->pub.dispatch_width = (unsigned)dw;
	/* --bottleneck-analysis: its section up to the next blank line */
	b = strstr(report, "Cycles with backend pressure increase");
	if (!b)
		b = strstr(report, "No resource or data dependency bottlenecks discovered");
	if (b) {
		const char *e = strstr(b, "\n\n");
		m->bottleneck = e ? tc_strndup(b, (size_t)(e - b)) : tc_strdup(b);
	} else {
		m->bottleneck = tc_strdup("");
	}
	if (!m->bottleneck)
		return -ENOMEM;
	return parse_resources(m, report);
}

/* The instruction lines of llvm-mc's output (tab-indented, not directives). */
static int take_insns(struct tacho_sim_mca *m, char *dis, size_t want)
{
	char *save = NULL;

	m->insns = calloc(want ? want : 1, sizeof(*m->insns));
	if (!m->insns)
		return -ENOMEM;
	for (char *l = strtok_r(dis, "\n", &save); l && m->pub.ninsns < want;
	     l = strtok_r(NULL, "\n", &save)) {
		char *t = tc_trim(l);
		if (!*t || *t == '.' || *t == '#')
			continue;
		for (char *c = t; *c; c++)
			if (*c == '\t')
				*c = ' ';
		m->insns[m->pub.ninsns] = tc_strdup(t);
		if (!m->insns[m->pub.ninsns])
			return -ENOMEM;
		m->pub.ninsns++;
	}
	return m->pub.ninsns == want ? 0 : -TACHO_EPARSE;
}

int tc_sim_mca_analyse(struct tacho_sim_mca *m, const uint8_t *code, size_t len,
		       size_t ninsns, const char *mcpu, struct tacho_diag *diag)
{
	char dir[4096], in[4200] = "", dis[4200] = "", rep[4200] = "", mcpu_opt[80];
	char *mc = NULL, *mca = NULL, *text = NULL;
	const char *tmp = tc_env_trusted("TMPDIR", NULL);
	size_t n;
	int err;
	FILE *f;

	dir[0] = '\0';
	mc = which("llvm-mc");
	mca = which("llvm-mca");
	if (!mc || !mca) {
		err = tc_diag_set(diag, mc ? "llvm-mca" : "llvm-mc", 0, 0, -TACHO_ENOSIM,
				  "%s is not installed (install the Debian package llvm)",
				  mc ? "llvm-mca" : "llvm-mc");
		goto out;
	}
	m->bytes = malloc(3 * len + 1);
	m->mcpu = tc_strdup(mcpu);
	if (!m->bytes || !m->mcpu) {
		err = -ENOMEM;
		goto out;
	}
	m->bytes[0] = '\0';
	for (size_t i = 0; i < len; i++)
		sprintf(m->bytes + (i ? 3 * i - 1 : 0), i ? " %02x" : "%02x", code[i]);
	m->pub.bytes = m->bytes;
	m->pub.mcpu = m->mcpu;
	snprintf(mcpu_opt, sizeof(mcpu_opt), "-mcpu=%s", mcpu);

	/* llvm-mc reads "0x90 0x90 ..." and writes assembly llvm-mca reads */
	snprintf(dir, sizeof(dir), "%s/tacho-mca-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		err = -errno;
		dir[0] = '\0';
		goto out;
	}
	snprintf(in, sizeof(in), "%s/block.txt", dir);
	snprintf(dis, sizeof(dis), "%s/block.s", dir);
	snprintf(rep, sizeof(rep), "%s/mca.txt", dir);
	f = fopen(in, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	for (size_t i = 0; i < len; i++)
		fprintf(f, "0x%02x%s", code[i], i + 1 < len ? " " : "\n");
	if (fclose(f)) {
		err = -EIO;
		goto out;
	}
	{
		char *mc_argv[] = { mc, (char *)"--disassemble", (char *)"-triple=x86_64-unknown-linux-gnu",
				    in, (char *)"-o", dis, NULL };
		char *mca_argv[] = { mca, (char *)"-mtriple=x86_64-unknown-linux-gnu", mcpu_opt,
				     (char *)"--bottleneck-analysis", (char *)"-o", rep, dis, NULL };
		err = run_tool(mc_argv, diag);
		if (!err)
			err = tc_read_file(dis, &text, &n, 1 << 20);
		if (!err)
			err = take_insns(m, text, ninsns);
		if (err == -TACHO_EPARSE)
			tc_diag_set(diag, dis, 0, 0, err, "llvm-mc did not disassemble the block's "
				    "%zu instructions", ninsns);
		if (!err)
			err = run_tool(mca_argv, diag);
	}
	if (err)
		goto out;
	err = tc_read_file(rep, &m->report, &n, 1 << 22);
	if (!err)
		err = parse_report(m, m->report);
	if (err == -TACHO_EPARSE)
		tc_diag_set(diag, rep, 0, 0, err, "cannot read llvm-mca's report");
	if (err)
		goto out;
	m->pub.insns = (const char *const *)m->insns;
	m->pub.resource_names = (const char *const *)m->res_names;
	m->pub.resource_pressure = m->res_pressure;
	m->pub.bottleneck = m->bottleneck;
	m->pub.report = m->report;
out:
	if (dir[0]) {
		if (in[0])
			unlink(in);
		if (dis[0])
			unlink(dis);
		if (rep[0])
			unlink(rep);
		rmdir(dir);
	}
	free(text);
	free(mc);
	free(mca);
	return err;
}

int tacho_sim_mca_new(const struct tacho_sim *sim, const struct tacho_sim_result *res,
		      struct tacho_sim_mca **out, struct tacho_diag *diag)
{
	struct perf_event_attr insn = { .size = sizeof(insn), .type = PERF_TYPE_HARDWARE,
					.config = PERF_COUNT_HW_INSTRUCTIONS };
	const struct tacho_sim_machine *mach = tacho_sim_machine(sim);
	struct tacho_sim_row *rows = NULL, *fn = NULL;
	struct tacho_sim_mca *m = NULL;
	static const size_t window = 1000;    /* instructions each side of the hottest */
	uint8_t *code = NULL;
	size_t n, nfn = 0, hot = 0, first, last, ncode = 0, len, lo, hi;
	unsigned *lens = NULL;
	int err;

	if (tc_diag_check(diag) || !sim || !res || !out)
		return -EINVAL;
	*out = NULL;
	err = tacho_sim_result_rows(res, TACHO_SIM_VIEW_INSTRUCTION, &insn, &rows, &n,
				    sizeof(*rows), NULL);
	if (!err && (!n || !rows[0].address || !rows[0].object))
		err = tc_diag_set(diag, "", 0, 0, -TACHO_ENOVALUE, "the simulation kept no "
				  "instructions (a run with dump_instr)");
	if (err)
		goto out;
	/* the hottest instruction's function, by address */
	fn = calloc(n, sizeof(*fn));
	if (!fn) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (rows[i].object == rows[0].object && rows[i].function == rows[0].function)
			fn[nfn++] = rows[i];
	qsort(fn, nfn, sizeof(*fn), cmp_addr);
	while (fn[hot].address != rows[0].address)
		hot++;
	/* the code around it, to measure each instruction and prove the block contiguous
	 * (a block is far shorter than the window) */
	lo = hot > window ? hot - window : 0;
	hi = nfn - hot > window ? hot + window : nfn;
	code = malloc(CODE_MAX);
	lens = calloc(hi - lo, sizeof(*lens));
	if (!code || !lens) {
		err = -ENOMEM;
		goto out;
	}
	err = read_code(rows[0].object, fn[lo].address, code, CODE_MAX, &ncode, diag);
	if (err)
		goto out;
	for (size_t i = lo; i < hi; i++) {
		uint64_t off = fn[i].address - fn[lo].address;
		lens[i - lo] = off < ncode ? tc_x86_insn_len(code + off, ncode - off) : 0;
	}
	if (!lens[hot - lo]) {
		err = tc_diag_set(diag, rows[0].object, 0, 0, -TACHO_ENOVALUE, "the hottest "
				  "instruction at 0x%llx cannot be decoded",
				  (unsigned long long)rows[0].address);
		goto out;
	}
	first = last = hot;
	while (first > lo && fn[first - 1].value == fn[hot].value && lens[first - 1 - lo] &&
	       fn[first - 1].address + lens[first - 1 - lo] == fn[first].address)
		first--;
	while (last + 1 < hi && fn[last + 1].value == fn[hot].value && lens[last + 1 - lo] &&
	       fn[last].address + lens[last - lo] == fn[last + 1].address)
		last++;
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	len = (size_t)(fn[last].address + lens[last - lo] - fn[first].address);
	m->object = tc_strdup(rows[0].object);
	m->function = tc_strdup(rows[0].function ? rows[0].function : "???");
	m->mcpu_source = tc_strdup(mach->mcpu_source);
	if (!m->object || !m->function || !m->mcpu_source) {
		err = -ENOMEM;
		goto out;
	}
	m->pub.object = m->object;
	m->pub.function = m->function;
	m->pub.address = fn[first].address;
	m->pub.executions = fn[hot].value;
	m->pub.mcpu_source = m->mcpu_source;
	err = tc_sim_mca_analyse(m, code + (fn[first].address - fn[lo].address), len, last - first + 1,
			 mach->mcpu, diag);
	if (err)
		goto out;
	*out = m;
	m = NULL;
out:
	free(code);
	free(lens);
	tacho_sim_mca_free(m);
	free(fn);
	free(rows);
	return err;
}
