/* sample-stubborn.c - a program that will not stop on SIGINT or SIGTERM: it notes each
 * one (by creating the file NOTED once) and spins on, for tacho record's second-signal
 * escalation (tests/e2e/test-cmd-record.c). READY is created once the handlers are in
 * place. It gives up by itself after 60 s of wall time (exit 3), so that a broken
 * tacho cannot hang the test suite.
 * usage: sample-stubborn READY NOTED */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static volatile unsigned long sink;

static void on_signal(int sig)
{
	(void)sig;
	got = 1;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	time_t end = time(NULL) + 60;
	int noted = 0;

	if (argc != 3)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	touch(argv[1]);
	while (time(NULL) < end) {
		for (unsigned long i = 0; i < 1000000; i++)
			sink += i;
		if (got && !noted) {
			touch(argv[2]);
			noted = 1;
		}
	}
	return 3;
}
