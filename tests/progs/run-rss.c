/* run-rss.c - runs a command and says how much memory it took: "run-rss SECONDS PROG
 * [ARGS...]" runs PROG, kills it (SIGKILL) after SECONDS, and ends with a line
 * "run-rss: maxrss N KiB" on stderr (the largest resident set of PROG and of the
 * children it waited for) and PROG's status (128 + the signal that ended it). A small
 * static program, so that what PROG starts with is its own: a child forked from a big
 * process (a test under AddressSanitizer) counts the parent's pages it shared until
 * its exec in its peak. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

static void on_alarm(int sig)
{
	(void)sig;
	kill(child, SIGKILL);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int st;

	if (argc < 3)
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned)atoi(argv[1]));
	while (wait4(child, &st, 0, &ru) < 0)
		;
	fprintf(stderr, "run-rss: maxrss %ld KiB\n", ru.ru_maxrss);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
