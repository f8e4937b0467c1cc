/* run.c - one simulated run: valgrind's callgrind or cachegrind over the program with
 * the machine's caches and only the simulations asked, its output files (one per
 * process, in a private folder) read and added up, its own messages kept out of the
 * program's standard error. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/sim.h"
#include "util/util.h"
#include "tacho/run.h"
#include "tacho/sim.h"

extern char **environ;

/* the output files' names, whichever tool wrote them (callgrind adds ".N" to a dump's) */
#define OUT_PREFIX "sim.out."
#define LOG_PREFIX "valgrind.log."

/* Where execvp would find the program: 0 and the path in *out (malloc'd), or ENOENT /
 * EACCES as exec would say them. */
static int resolve_program(const char *name, char **out)
{
	return -tc_path_lookup(name, out);
}

/* What valgrind can start: an ELF executable of this machine, a "#!" script, or text
 * (which it runs with /bin/sh, as execvp does). NULL, or why not. */
static const char *runnable(const char *path)
{
	unsigned char h[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;   /* exec will say it better */
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n <= 0)
		return NULL;
	if (n >= 20 && !memcmp(h, "\177ELF", 4)) {
		unsigned machine = (unsigned)h[18] | (unsigned)h[19] << 8;
#if defined(__x86_64__)
		if (h[4] != 2 || machine != 62)
			return "an ELF file for another machine than x86-64";
#else
		(void)machine;
#endif
		return NULL;
	}
	if (n >= 2 && h[0] == '#' && h[1] == '!')
		return NULL;
	if (memchr(h, '\0', (size_t)n))
		return "neither an ELF executable nor a script";
	return NULL;
}

/* Whether the program at path names tacho_region_begin (imports it, or has it in its
 * symbols): a program with regions, which cachegrind cannot count (it has no client
 * requests to dump at a boundary). A file that cannot be read says no: exec will tell. */
static bool has_regions(const char *path)
{
	static const char sym[] = "tacho_region_begin";
	char *text = NULL;
	size_t len = 0;
	bool found;

	if (tc_read_file(path, &text, &len, (size_t)1 << 30) != 0)
		return false;
	found = memmem(text, len, sym, sizeof(sym) - 1) != NULL;
	free(text);
	return found;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096 + 512];

	if (d) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* valgrind's first complaint in its logs ("valgrind: ...", or a fatal line), for a run
 * that wrote no counts. */
static void first_complaint(const char *dir, char *buf, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	buf[0] = '\0';
	if (!d)
		return;
	while (!buf[0] && (de = readdir(d)) != NULL) {
		char path[4096 + 512], *text = NULL;
		size_t len;

		if (!tc_starts_with(de->d_name, LOG_PREFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (tc_read_file(path, &text, &len, 1 << 20) == 0) {
			char *line = text, *save = NULL;
			for (line = strtok_r(text, "\n", &save); line && !buf[0];
			     line = strtok_r(NULL, "\n", &save))
				if (tc_starts_with(line, "valgrind:") || strstr(line, "FATAL") ||
				    strstr(line, "Fatal error"))
					snprintf(buf, size, "%s", tc_trim(line));
		}
		free(text);
	}
	closedir(d);
}

/* Whether valgrind can run prog0 (found on PATH as an exec would): 0, or the error
 * with *diag (and the exec's errno in *exec_err where it was not found or may not be
 * run); a program that marks regions is refused under cachegrind. */
static int check_program(const char *prog0, bool cachegrind, int *exec_err,
			 struct tacho_diag *diag)
{
	char *prog = NULL;
	const char *why;
	int e;

	e = resolve_program(prog0, &prog);
	if (e == ENOMEM)
		return -ENOMEM;
	if (e) {
		char buf[256];
		if (exec_err)
			*exec_err = e;
		tacho_exec_strerror(prog0, e, buf, sizeof(buf));
		return tc_diag_set(diag, prog0, 0, 0, -TACHO_ENOSTART, "%s", buf);
	}
	why = runnable(prog);
	/* regions under cachegrind would be left out without a word: refused before the
	 * run instead (docs/sim.md, "The engines"); a child or an exec'd program with
	 * regions is not seen here */
	if (!why && cachegrind && has_regions(prog)) {
		free(prog);
		return tc_diag_set(diag, prog0, 0, 0, -TACHO_ENOVALUE,
				   "'%s' marks regions (tacho_region_begin), which cachegrind "
				   "cannot count: simulate it with callgrind", prog0);
	}
	free(prog);
	if (why)
		return tc_diag_set(diag, prog0, 0, 0, -TACHO_ENOSTART,
				   "valgrind cannot run '%s': %s", prog0, why);
	return 0;
}

/* Hands each of valgrind's output files in dir to fn (and each log to log_fn, if any),
 * in the order of the names, so that a result never depends on readdir's; *nfiles: the
 * output files. 0, or the first error (of reading, or fn's). */
static int read_files(const char *dir, tc_sim_file_fn *fn, tc_sim_file_fn *log_fn, void *arg,
		      size_t *nfiles, struct tacho_diag *diag)
{
	struct dirent **list = NULL;
	int n = scandir(dir, &list, NULL, alphasort);
	int err = 0;

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const struct dirent *de = list[i];
		bool out = tc_starts_with(de->d_name, OUT_PREFIX);

		if (!err && (out || (log_fn && tc_starts_with(de->d_name, LOG_PREFIX)))) {
			char path[4400], *text = NULL;
			size_t len;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			err = tc_read_file(path, &text, &len, (size_t)1 << 32);
			if (!err)
				err = (out ? fn : log_fn)(arg, text, len, de->d_name, diag);
			free(text);
			*nfiles += out;
		}
		free(list[i]);
	}
	free(list);
	return err;
}

int tc_sim_run_files(const struct tacho_sim *sim, const struct tc_sim_how *how,
		     char *const argv[], char *const extra[], tc_sim_file_fn *fn,
		     tc_sim_file_fn *log_fn, void *arg, struct tacho_exit *ex, int *exec_err,
		     struct tacho_diag *diag)
{
	static const struct tc_sim_how all = { TACHO_SIM_ENGINE_CALLGRIND,
					       TACHO_SIM_CACHES | TACHO_SIM_BRANCHES };
	struct tacho_child_opts co = { .sz = sizeof(co), .forward_signals = true };
	const struct tacho_sim_machine *m = tacho_sim_machine(sim);
	static char *const sim_env[] = { (char *)"TACHO_SIM=1", NULL };
	struct tacho_child *ch = NULL;
	char dir[4096], i1[80], d1[80], ll[80], outf[4200], logf[4200];
	const char *tmp = tc_env_trusted("TMPDIR", NULL);
	char **vargv = NULL;
	size_t nargs = 0, nextra = 0, k = 0, nfiles = 0;
	int err, verr = 0;

	if (exec_err)
		*exec_err = 0;
	if (!sim || !argv || !argv[0] || !argv[0][0] || !fn || !ex)
		return -EINVAL;
	if (!how)
		how = &all;
	bool cachegrind = how->tool == TACHO_SIM_ENGINE_CACHEGRIND;
	err = check_program(argv[0], cachegrind, exec_err, diag);
	if (err)
		return err;
	snprintf(dir, sizeof(dir), "%s/tacho-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		err = -errno;
		return tc_diag_set(diag, dir, 0, 0, err, "cannot make a folder for valgrind's "
				   "files: %s", tacho_strerror(err));
	}
	while (argv[nargs])
		nargs++;
	while (extra && extra[nextra])
		nextra++;
	vargv = calloc(nargs + nextra + 16, sizeof(*vargv));
	if (!vargv) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(i1, sizeof(i1), "--I1=%llu,%u,%u", (unsigned long long)m->i1.size, m->i1.ways,
		 m->i1.line_size);
	snprintf(d1, sizeof(d1), "--D1=%llu,%u,%u", (unsigned long long)m->d1.size, m->d1.ways,
		 m->d1.line_size);
	snprintf(ll, sizeof(ll), "--LL=%llu,%u,%u", (unsigned long long)m->ll.size, m->ll.ways,
		 m->ll.line_size);
	/* %p: one file per process, so that followed children do not overwrite theirs */
	snprintf(outf, sizeof(outf), "--%s-out-file=%s/" OUT_PREFIX "%%p",
		 cachegrind ? "cachegrind" : "callgrind", dir);
	snprintf(logf, sizeof(logf), "--log-file=%s/" LOG_PREFIX "%%p", dir);
	vargv[k++] = (char *)tc_sim_valgrind(sim);
	vargv[k++] = (char *)(cachegrind ? "--tool=cachegrind" : "--tool=callgrind");
	/* a simulation off costs nothing: callgrind without either runs gzip in 0.32 of
	 * its time with both (docs/sim.md, "The engines"); Ir is counted either way */
	vargv[k++] = (char *)(how->sims & TACHO_SIM_CACHES ? "--cache-sim=yes" : "--cache-sim=no");
	vargv[k++] = (char *)(how->sims & TACHO_SIM_BRANCHES ? "--branch-sim=yes"
							     : "--branch-sim=no");
	if (how->sims & TACHO_SIM_CACHES) {
		vargv[k++] = i1;
		vargv[k++] = d1;
		vargv[k++] = ll;
	}
	vargv[k++] = (char *)(tc_sim_children(sim) ? "--trace-children=yes"
						   : "--trace-children=no");
	/* callgrind writes nothing when a process execs: a dump just before keeps what ran
	 * before (the exec'd program, followed, writes its own file). cachegrind 3.19 has
	 * no such option: what ran before an exec is lost (docs/sim.md) */
	if (!cachegrind)
		vargv[k++] = (char *)"--dump-before=execve";
	/* One context per function, whatever its recursion. callgrind's default (2) names a
	 * function's second level "f'2", and it takes a jump back to a function's first
	 * instruction (gcc's do-while loops) for a call of the function itself: a loop
	 * showed as "kloop'2" with all but one iteration's instructions, and its hottest
	 * block ran one time fewer than it did. Not with --separate-callers (record --sim
	 * -g), where callgrind then takes such jumps for calls at every level, not only
	 * the first (docs/sim.md, "Call chains"). */
	bool callers = false;
	for (size_t i = 0; i < nextra; i++)
		callers |= !strncmp(extra[i], "--separate-callers", 18);
	if (!callers && !cachegrind)
		vargv[k++] = (char *)"--separate-recs=1";
	if (tc_sim_dump_instr(sim) && !cachegrind)
		vargv[k++] = (char *)"--dump-instr=yes";
	vargv[k++] = outf;
	vargv[k++] = logf;
	for (size_t i = 0; i < nextra; i++)
		vargv[k++] = extra[i];
	vargv[k++] = (char *)"--";
	for (size_t i = 0; i < nargs; i++)
		vargv[k++] = argv[i];
	vargv[k] = NULL;
	/* the program's environment with TACHO_SIM=1 put in (tacho_child_opts.env adds to
	 * the caller's): its regions, if it has any, then mark themselves for the
	 * simulator (lib/regions/region-sim.c) */
	co.env = sim_env;
	err = tacho_child_start(vargv, &co, &ch);
	if (err)
		goto out;
	err = tacho_child_exec(ch, &verr);
	if (err == -TACHO_ENOSTART) {
		char buf[256];
		tacho_exec_strerror(vargv[0], verr, buf, sizeof(buf));
		err = tc_diag_set(diag, vargv[0], 0, 0, -TACHO_ENOSIM, "%s (install the Debian "
				  "package valgrind)", buf);
		goto out;
	}
	if (!err)
		err = tacho_child_wait(ch, ex);
	if (err)
		goto out;
	err = read_files(dir, fn, log_fn, arg, &nfiles, diag);
	if (err)
		goto out;
	if (!nfiles) {
		char what[200], ended[64];
		first_complaint(dir, what, sizeof(what));
		if (ex->exited && (ex->code == 126 || ex->code == 127))
			err = tc_diag_set(diag, argv[0], 0, 0, -TACHO_ENOSTART,
					  "valgrind cannot run '%s'%s%s", argv[0],
					  what[0] ? ": " : "", what);
		else
			err = tc_diag_set(diag, argv[0], 0, 0, -TACHO_ENOSIM,
					  "valgrind wrote no counts (it %s)%s%s",
					  tacho_exit_describe(ex, ended, sizeof(ended)),
					  what[0] ? ": " : "", what);
	}
out:
	tacho_child_free(ch);
	free(vargv);
	remove_dir(dir);
	return err;
}

static int add_file(void *arg, const char *text, size_t len, const char *name,
		    struct tacho_diag *diag)
{
	return tacho_sim_result_parse(text, len, name, arg, diag);
}

int tacho_sim_run_events(const struct tacho_sim *sim, char *const argv[],
			 const struct perf_event_attr *const events[], size_t n,
			 struct tacho_sim_result **out, int *exec_err, struct tacho_diag *diag)
{
	struct tc_sim_how how = { TACHO_SIM_ENGINE_CALLGRIND, 0 };
	struct tacho_sim_result *res = NULL;
	struct tacho_exit ex;
	int err;

	if (tc_diag_check(diag) || !out || !sim || (n && !events))
		return -EINVAL;
	*out = NULL;
	/* the simulations the events need; every one for "every event" */
	for (size_t i = 0; i < n; i++) {
		if (!events[i])
			return -EINVAL;
		how.sims |= tc_sim_event_sims(events[i]);
	}
	if (!events || tc_sim_engine(sim) == TACHO_SIM_ENGINE_CALLGRIND)
		how.sims = TACHO_SIM_CACHES | TACHO_SIM_BRANCHES;
	if (tc_sim_engine(sim) == TACHO_SIM_ENGINE_CACHEGRIND)
		how.tool = TACHO_SIM_ENGINE_CACHEGRIND;
	err = tc_sim_result_new(&res);
	if (err)
		return err;
	err = tc_sim_run_files(sim, &how, argv, NULL, add_file, NULL, &res, &ex, exec_err,
			       diag);
	if (err) {
		tacho_sim_result_free(res);
		return err;
	}
	tc_sim_result_set_exit(res, &ex);
	tc_sim_result_set_run(res, how.tool == TACHO_SIM_ENGINE_CACHEGRIND ? "cachegrind"
									    : "callgrind",
			      how.sims);
	*out = res;
	return 0;
}

int tacho_sim_run(const struct tacho_sim *sim, char *const argv[],
		  struct tacho_sim_result **out, int *exec_err, struct tacho_diag *diag)
{
	return tacho_sim_run_events(sim, argv, NULL, 0, out, exec_err, diag);
}
