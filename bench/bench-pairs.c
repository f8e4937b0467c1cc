/* bench-pairs.c - two commands timed in interleaved pairs, as the goals are
 * stated: each round runs A and B once each (A first in even rounds, B first in odd
 * ones, so that neither always gets the warmer cache), and the figure is the median of
 * the per-round ratios A/B with their min and max, for wall time and for CPU time (user
 * + system of the command and its children, from wait4). Their outputs go to
 * /dev/null, or stderr to a file given with -e (the command's own stderr is then what
 * is measured writing).
 *
 *   bench-pairs [-e FILE] ROUNDS CMD_A... ';' CMD_B...
 *
 * prints "A<TAB>B<TAB>wall_med_a_ms<TAB>wall_med_b_ms<TAB>ratio_med<TAB>min<TAB>max
 * <TAB>cpu_med_a_ms<TAB>cpu_med_b_ms<TAB>ratio_med<TAB>min<TAB>max" on one line. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs argv; *wall and *cpu in ms. 0, or -1 when it could not run or failed. */
static int run(char **argv, const char *errfile, double *wall, double *cpu)
{
	struct rusage ru;
	double t0 = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int err = errfile ? open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600) : null;

		if (null < 0 || err < 0)
			_exit(127);
		dup2(null, 0);
		dup2(null, 1);
		dup2(err, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*wall = now_ms() - t0;
	*cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void name_of(char **argv, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (char **a = argv; *a && n + 1 < size; a++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", a == argv ? "" : " ", *a);
}

int main(int argc, char **argv)
{
	const char *errfile = NULL;
	char **a, **b = NULL, na[200], nb[200];
	unsigned rounds;
	double *wa, *wb, *ca, *cb, *rw, *rc;

	if (argc > 2 && !strcmp(argv[1], "-e")) {
		errfile = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 5 || (rounds = (unsigned)atoi(argv[1])) == 0)
		goto usage;
	a = argv + 2;
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], ";")) {
			argv[i] = NULL;
			b = argv + i + 1;
		}
	if (!b || !*b || !*a)
		goto usage;
	wa = calloc(rounds, sizeof(double));
	wb = calloc(rounds, sizeof(double));
	ca = calloc(rounds, sizeof(double));
	cb = calloc(rounds, sizeof(double));
	rw = calloc(rounds, sizeof(double));
	rc = calloc(rounds, sizeof(double));
	if (!wa || !wb || !ca || !cb || !rw || !rc)
		return 1;
	for (unsigned r = 0; r < rounds; r++) {
		int e;

		if (r % 2 == 0)
			e = run(a, errfile, &wa[r], &ca[r]) || run(b, errfile, &wb[r], &cb[r]);
		else
			e = run(b, errfile, &wb[r], &cb[r]) || run(a, errfile, &wa[r], &ca[r]);
		if (e) {
			fprintf(stderr, "bench-pairs: a command failed\n");
			return 1;
		}
		rw[r] = wb[r] > 0 ? wa[r] / wb[r] : 0;
		rc[r] = cb[r] > 0 ? ca[r] / cb[r] : 0;
	}
	name_of(a, na, sizeof(na));
	name_of(b, nb, sizeof(nb));
	tc_stats_sort(rw, rounds);
	tc_stats_sort(rc, rounds);
	printf("%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", na, nb,
	       tc_stats_percentile(wa, rounds, 50), tc_stats_percentile(wb, rounds, 50),
	       tc_stats_percentile_sorted(rw, rounds, 50), rw[0], rw[rounds - 1],
	       tc_stats_percentile(ca, rounds, 50), tc_stats_percentile(cb, rounds, 50),
	       tc_stats_percentile_sorted(rc, rounds, 50), rc[0], rc[rounds - 1]);
	free(wa);
	free(wb);
	free(ca);
	free(cb);
	free(rw);
	free(rc);
	return 0;
usage:
	fprintf(stderr, "usage: bench-pairs [-e FILE] ROUNDS CMD_A... ';' CMD_B...\n");
	return 2;
}
