/* record.c - `tacho record --sim`: one simulated run with per-instruction costs, written
 * as a recording that every report view reads: an EVENT flagged simulated per event,
 * the binaries' executable segments at the addresses valgrind loaded them (from its
 * log), and one SAMPLE per process and instruction weighing the exact simulated count. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "record/recfile.h"
#include "record/sideband.h"
#include "sim/sim.h"
#include "util/util.h"
#include "tacho/events.h"
#include "tacho/record.h"
#include "tacho/sim.h"

#define TC_OPTS_V1_tacho_sim_record_opts tc_offsetofend(struct tacho_sim_record_opts, output)
#define RESULT_SZ_V1 tc_offsetofend(struct tacho_record_result, choice)

/* One output file: its process, its command's first word and its costs. */
struct part {
	long pid;
	char *comm;
	struct tacho_sim_result *res;
};

struct sim_rec {
	struct part *parts;
	size_t nparts;
	struct tc_sim_load *loads;
	size_t nloads;
};

static void sim_rec_exit(struct sim_rec *r)
{
	for (size_t i = 0; i < r->nparts; i++) {
		free(r->parts[i].comm);
		tacho_sim_result_free(r->parts[i].res);
	}
	free(r->parts);
	tc_sim_loads_free(r->loads, r->nloads);
}

/* The program's name from the file's "cmd:  PROG ARGS" (its last path component). */
static char *file_comm(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e, *s;
		if (!nl)
			nl = end;
		if ((size_t)(nl - p) > 5 && !memcmp(p, "cmd: ", 5)) {
			s = p + 5;
			while (s < nl && *s == ' ')
				s++;
			for (e = s; e < nl && *e != ' '; e++)
				if (*e == '/')
					s = e + 1;
			return tc_strndup(s, (size_t)(e - s));
		}
		/* the header ends at the first name or cost line */
		if (p < nl && (*p == 'f' || *p == 'o' || (*p >= '0' && *p <= '9')))
			break;
		p = nl + 1;
	}
	return tc_strdup("?");
}

static int add_output(void *arg, const char *text, size_t len, const char *name,
		      struct tacho_diag *diag)
{
	struct sim_rec *r = arg;
	struct part *np = realloc(r->parts, (r->nparts + 1) * sizeof(*np));
	struct tacho_sim_result *res = NULL;
	int err;

	if (!np)
		return -ENOMEM;
	r->parts = np;
	err = tacho_sim_result_parse(text, len, name, &res, diag);
	if (err)
		return err;
	np = &r->parts[r->nparts];
	np->res = res;
	np->pid = tc_sim_result_pid(res);
	np->comm = file_comm(text, len);
	r->nparts++;
	return np->comm ? 0 : -ENOMEM;
}

void tc_sim_loads_free(struct tc_sim_load *loads, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(loads[i].path);
	free(loads);
}

/* valgrind.log.PID at verbosity 2: "--PID-- Reading syms from PATH" then, for a binary
 * with code, "--PID--    svma 0x..., avma 0x..." (debuginfo.c: the text's stated and
 * actual addresses). */
int tc_sim_log_loads(const char *text, size_t len, struct tc_sim_load **loads, size_t *n)
{
	static const char reading[] = "-- Reading syms from ";
	const char *p = text, *end = text + len;
	char *path = NULL, line[4200];
	long pid = 0;
	int err = 0;

	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *k;
		unsigned long long svma, avma;
		size_t ln;

		if (!nl)
			nl = end;
		ln = (size_t)(nl - p) < sizeof(line) - 1 ? (size_t)(nl - p) : sizeof(line) - 1;
		memcpy(line, p, ln);
		line[ln] = '\0';
		p = nl + 1;
		if (line[0] != '-' || line[1] != '-' || strlen(line) != ln)
			continue;
		if ((k = strstr(line, reading)) != NULL) {
			free(path);
			path = tc_strdup(k + strlen(reading));
			pid = strtol(line + 2, NULL, 10);
			if (!path)
				err = -ENOMEM;
		} else if (path && (k = strstr(line, "--    svma ")) != NULL &&
			   sscanf(k, "--    svma %llx, avma %llx", &svma, &avma) == 2) {
			struct tc_sim_load *nv = realloc(*loads, (*n + 1) * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			*loads = nv;
			nv[(*n)++] = (struct tc_sim_load){ pid, path, avma - svma };
			path = NULL;
		}
	}
	free(path);
	return err;
}

static int add_log(void *arg, const char *text, size_t len, const char *name,
		   struct tacho_diag *diag)
{
	struct sim_rec *r = arg;

	(void)name;
	(void)diag;
	return tc_sim_log_loads(text, len, &r->loads, &r->nloads);
}

/* The bias of path in process pid: 0 and *bias, or -ENOENT when the log did not say. */
static int find_bias(const struct sim_rec *r, long pid, const char *path, uint64_t *bias)
{
	/* the last one: after an exec the new image's load replaces the old */
	for (size_t i = r->nloads; i-- > 0;)
		if (r->loads[i].pid == pid && !strcmp(r->loads[i].path, path)) {
			*bias = r->loads[i].bias;
			return 0;
		}
	return -ENOENT;
}

/* The MMAP records of path's executable segments in process pid, moved by bias. */
static void write_maps(struct tc_sideband *sb, long pid, const char *path, uint64_t bias)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;

	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 4096) {
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			uint64_t skew;
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
				continue;
			/* as the loader maps it: from the page holding the segment's start */
			skew = ph.p_vaddr & 4095;
			tc_sideband_mmap(sb, (uint32_t)pid, (uint32_t)pid, ph.p_vaddr - skew + bias,
					 ph.p_memsz + skew, ph.p_offset - skew, 5, 0, NULL, 0, path);
		}
	}
	close(fd);
}

/* Whether path is a fixed-address executable (loaded where it says: bias 0). */
static bool fixed_address(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	bool fixed;

	if (fd < 0)
		return false;
	fixed = pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
		!memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_type == ET_EXEC;
	close(fd);
	return fixed;
}

/* The binaries of one output file and where valgrind loaded them. */
struct objs {
	const char **ob;             /* the result's pool: one pointer per name */
	uint64_t *bias;
	bool *known;
	size_t n;
};

/* The index of ob in o (added when new): -1 when out of memory. */
static long obj_find(struct objs *o, const char *ob)
{
	for (size_t k = 0; k < o->n; k++)
		if (o->ob[k] == ob)
			return (long)k;
	o->ob[o->n] = ob;
	o->bias[o->n] = 0;
	o->known[o->n] = false;
	return (long)o->n++;
}

/* The bias of binary ob in o: 0 when unknown. */
static uint64_t obj_bias(const struct objs *o, const char *ob)
{
	for (size_t k = 0; k < o->n; k++)
		if (o->ob[k] == ob && o->known[k])
			return o->bias[k];
	return 0;
}

/* Each calling context's most frequent call site: callgrind's --separate-callers names
 * a function with its callers ("loop'main'(below main)"), and the call sites say from
 * which instruction of which context each context was called. calls maps a callee's
 * name to the index of its call site. */
static int index_calls(const struct tacho_sim_result *res, struct tc_hmap *calls)
{
	for (size_t i = 0; i < tc_sim_result_ncalls(res); i++) {
		const char *ob, *fn, *cfn, *ob2, *fn2, *cfn2;
		uint64_t addr, count, addr2, count2;
		uint32_t at;
		int err;

		tc_sim_result_call(res, i, &ob, &fn, &cfn, &addr, &count);
		if (tc_hmap_get(calls, (uint64_t)(uintptr_t)cfn, &at)) {
			tc_sim_result_call(res, at, &ob2, &fn2, &cfn2, &addr2, &count2);
			if (count2 >= count)
				continue;
		}
		err = tc_hmap_put(calls, (uint64_t)(uintptr_t)cfn, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

/* The call chain of an instruction of context fn at ip, leaf first: the call site of
 * each caller (+1: a return address's byte before it is the call's, as report reads
 * chains), as deep as the context's name goes (depth callers). The number filled. */
static uint32_t call_chain(const struct tacho_sim_result *res, const struct tc_hmap *calls,
			   const struct objs *o, const char *fn, uint64_t ip, unsigned depth,
			   uint64_t *chain)
{
	uint32_t n = 0;

	chain[n++] = ip;
	for (unsigned d = 0; d < depth && fn; d++) {
		const char *ob, *caller, *cfn;
		uint64_t addr, count;
		uint32_t at;

		if (!tc_hmap_get(calls, (uint64_t)(uintptr_t)fn, &at))
			break;
		tc_sim_result_call(res, at, &ob, &caller, &cfn, &addr, &count);
		chain[n++] = addr + obj_bias(o, ob) + 1;
		fn = caller;
	}
	return n;
}

/* The mappings, names and samples of one output file. callgrind writes an
 * instruction's address relative to its binary's load bias (the ELF address for a
 * position-independent binary); the process's address is that plus the bias. */
static int write_part(struct tc_record_writer *w, struct tc_sideband *sb, const struct sim_rec *r,
		      const struct part *pt, const struct perf_event_attr *attrs, size_t nev,
		      unsigned callers, uint64_t *samples, struct tacho_diag *diag)
{
	struct perf_event_attr insn = { .size = sizeof(insn), .type = PERF_TYPE_HARDWARE,
					.config = PERF_COUNT_HW_INSTRUCTIONS };
	struct tacho_sim_row *rows = NULL;
	struct objs o = { 0 };
	struct tc_hmap calls;
	uint64_t *chain = NULL;
	size_t n = 0;
	int err;

	tc_hmap_init(&calls);
	/* every binary with an instruction that ran: the Ir view holds them all */
	err = tacho_sim_result_rows(pt->res, TACHO_SIM_VIEW_FUNCTION, &insn, &rows, &n,
				    sizeof(*rows), NULL);
	if (err == -TACHO_ENOVALUE)
		err = 0;
	if (err)
		goto out;
	o.ob = calloc(n + 1, sizeof(*o.ob));
	o.bias = calloc(n + 1, sizeof(*o.bias));
	o.known = calloc(n + 1, sizeof(*o.known));
	if (!o.ob || !o.bias || !o.known) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *ob = rows[i].object;
		size_t k = o.n;

		if (!ob || ob[0] != '/' || (size_t)obj_find(&o, ob) != k)
			continue;
		if (find_bias(r, pt->pid, ob, &o.bias[k]) && !fixed_address(ob)) {
			tc_log(TACHO_LOG_WARN, "%s: valgrind's log did not say where it loaded it: "
			       "its simulated counts are not symbolized", ob);
			continue;
		}
		o.known[k] = true;
		write_maps(sb, pt->pid, ob, o.bias[k]);
	}
	free(rows);
	rows = NULL;
	if (callers) {
		chain = calloc(callers + 1u, sizeof(*chain));
		err = chain ? index_calls(pt->res, &calls) : -ENOMEM;
		if (err)
			goto out;
	}
	tc_record_writer_comm(w, (uint32_t)pt->pid, (uint32_t)pt->pid, false, 0, pt->comm);
	for (size_t e = 0; e < nev && !err; e++) {
		err = tacho_sim_result_rows(pt->res, TACHO_SIM_VIEW_INSTRUCTION, &attrs[e], &rows,
					    &n, sizeof(*rows), NULL);
		if (err == -TACHO_ENOVALUE) {
			err = 0;    /* this file lacks the counts (checked on the whole run) */
			continue;
		}
		if (err)
			break;
		for (size_t i = 0; i < n; i++) {
			uint64_t ip = rows[i].address + obj_bias(&o, rows[i].object);
			uint32_t nr = callers ? call_chain(pt->res, &calls, &o, rows[i].function,
							   ip, callers, chain) : 0;
			tc_record_writer_sample(w, 0, ip, 0, rows[i].value, (uint32_t)pt->pid,
						(uint32_t)pt->pid, 0, (uint16_t)e,
						PERF_RECORD_MISC_USER, nr, chain);
		}
		*samples += n;
		free(rows);
		rows = NULL;
		err = tc_record_writer_flush(w);
		if (err)
			tc_diag_set(diag, "", 0, 0, err, "cannot write the recording: %s",
				    tacho_strerror(err));
	}
out:
	free(rows);
	free(chain);
	tc_hmap_exit(&calls);
	free(o.ob);
	free(o.bias);
	free(o.known);
	return err;
}

/* "valgrind's callgrind; I1 32768 B 8-way 64 B lines, ..." for the file's META. */
static void write_meta(struct tc_record_writer *w, const struct tacho_sim *sim,
		       char *const argv[])
{
	const struct tacho_sim_machine *m = tacho_sim_machine(sim);
	struct tc_sb sb = TC_SB_INIT;

	tc_sb_init(&sb);
	for (size_t i = 0; argv[i]; i++)
		tc_sb_addf(&sb, "%s%s", i ? " " : "", argv[i]);
	if (!sb.oom)
		tc_record_writer_meta(w, "command", sb.buf);
	tc_record_writer_meta(w, "tacho", tacho_version());
	tc_record_writer_meta(w, "simulated-by", m->tool);
	tc_sb_exit(&sb);
	tc_sb_init(&sb);
	tc_sb_addf(&sb, "I1 %" PRIu64 ",%u,%u D1 %" PRIu64 ",%u,%u LL %" PRIu64 ",%u,%u",
		   m->i1.size, m->i1.ways, m->i1.line_size, m->d1.size, m->d1.ways,
		   m->d1.line_size, m->ll.size, m->ll.ways, m->ll.line_size);
	if (!sb.oom)
		tc_record_writer_meta(w, "simulated-caches", sb.buf);
	tc_sb_exit(&sb);
	tc_record_writer_meta(w, "simulated-caches-from", m->source);
}

int tacho_sim_record(const struct tacho_sim *sim, char *const argv[],
		     const struct tacho_sim_record_opts *caller_opts,
		     struct tacho_record_result *res, struct tacho_diag *diag)
{
	/* -v -v: valgrind's log then says where it loaded each binary (add_log); with
	 * call chains, each function's callers are part of its name */
	char separate[48];
	char *extra[] = { (char *)"-v", (char *)"-v", (char *)"--dump-instr=yes", separate,
			  NULL };
	struct tacho_sim_record_opts opts = { .sz = sizeof(opts) };
	struct tacho_record_result out = { .sz = sizeof(out) };
	struct tc_record_writer w = { .fd = -1 };
	struct perf_event_attr *attrs = NULL;
	struct tacho_evlist *list = NULL;
	struct sim_rec r = { 0 };
	struct tc_sideband sb;
	const char *path;
	bool opened = false;
	size_t nev;
	int err;

	if (tc_diag_check(diag) || !sim || !argv || !argv[0] || !res || res->sz < RESULT_SZ_V1)
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(caller_opts, tacho_sim_record_opts, diag);
	if (err)
		return err;
	TC_OPTS_COPY(&opts, caller_opts);
	path = opts.output ? opts.output : "tacho.rec";
	if (opts.callers > TACHO_SIM_CALLERS_MAX) {
		err = tc_diag_set(diag, "", 0, 0, -EINVAL, "call chains of at most %u callers",
				  TACHO_SIM_CALLERS_MAX);
		return err;
	}
	/* without call chains no --separate-callers at all, so that the run gets
	 * --separate-recs=1 (run.c): a loop back to its function's entry stays one
	 * function */
	if (opts.callers)
		snprintf(separate, sizeof(separate), "--separate-callers=%u", opts.callers);
	else
		extra[3] = NULL;
	err = tacho_evlist_parse(opts.events ? opts.events : "instructions", &list, diag);
	if (err)
		return err;
	nev = tacho_evlist_count(list);
	if (nev > UINT16_MAX) {     /* a sample names its event in 16 bits */
		err = tc_diag_set(diag, opts.events, 0, 0, -EINVAL, "more events than a "
				  "recording holds (65535)");
		goto out;
	}
	attrs = calloc(nev, sizeof(*attrs));
	if (!attrs) {
		err = -ENOMEM;
		goto out;
	}
	/* every event must have a simulated meaning before anything runs */
	for (size_t i = 0; i < nev; i++) {
		const char *why;

		tacho_evlist_attr(list, i, &attrs[i]);
		why = tc_sim_event_why(&attrs[i]);
		if (why) {
			err = tc_diag_set(diag, tacho_evlist_name(list, i), 0, 0, -TACHO_ENOVALUE,
					  "cannot record '%s' under --sim: %s",
					  tacho_evlist_name(list, i), why);
			goto out;
		}
	}
	/* the output first, as record makes it: a name that cannot be written is told
	 * before the program runs its minutes under valgrind */
	err = tc_record_writer_open(&w, path);
	if (err) {
		tc_diag_set(diag, path, 0, 0, err, "cannot write '%s': %s", path,
			    err == -ELOOP ? "it is a symbolic link, which tacho does not follow"
					  : tacho_strerror(err));
		goto out;
	}
	opened = true;
	/* callgrind with both simulations, whatever the engine: a recording needs its
	 * per-instruction costs, and keeps every event's */
	err = tc_sim_run_files(sim, NULL, argv, extra, add_output, add_log, &r, &out.exit,
			       &out.exec_err, diag);
	if (err)
		goto out;
	out.ran = true;
	write_meta(&w, sim, argv);
	for (size_t i = 0; i < nev; i++)
		tc_record_writer_event(&w, (uint32_t)i, attrs[i].type, attrs[i].config,
				       PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD |
				       (opts.callers ? PERF_SAMPLE_CALLCHAIN : 0), 0,
				       TC_EVF_SIM | (opts.callers ? TC_EVF_CALLCHAIN : 0),
				       tacho_evlist_name(list, i));
	tc_sideband_init(&sb, &w);
	for (size_t i = 0; i < r.nparts && !err; i++)
		err = write_part(&w, &sb, &r, &r.parts[i], attrs, nev, opts.callers,
				 &out.samples, diag);
	tc_sideband_exit(&sb);
	if (err)
		goto out;
	tc_record_writer_finish(&w, out.samples, 0, 0, out.exit.status);
	err = tc_record_writer_flush(&w);
	if (!err) {
		out.bytes = w.written;
		opened = false;
		err = tc_record_writer_close(&w);
	}
	if (err) {
		tc_diag_set(diag, path, 0, 0, err, "cannot write: %s", tacho_strerror(err));
		goto out;
	}
out:
	/* also on error: ran, exit and exec_err say what happened to the program */
	tc_sized_put_sz(res, &out, sizeof(out));
	if (opened)
		tc_record_writer_discard(&w);
	sim_rec_exit(&r);
	free(attrs);
	tacho_evlist_free(list);
	return err;
}
