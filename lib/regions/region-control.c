/* region-control.c - the program's side of `tacho stat --regions`: when the process
 * tacho launched enters its first region (no thread of it inside one before), it asks
 * tacho to enable the counters, and when its last region ends, to disable them, over
 * the socket that TACHO_STAT_CONTROL names, waiting for each "ack" so that the counts
 * start and stop exactly at the region's edges. perf's --control fd:CTL,ACK is the
 * precedent and the words are its: "enable", "disable", and "ack\n\0" back. The socket
 * is a socketpair, spoken to with send/recv: a pipe's write(2) would be counted as one
 * by syscalls:sys_enter_write when the counters are on. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "regions/region-int.h"
#include "util/util.h"

bool tc_region_ctl_on;

static int ctl_fd = -1;
static pid_t ctl_pid;                /* the process tacho launched: a fork's child keeps
					the descriptor but is not it */
static unsigned ctl_active;          /* threads of the process inside a region */
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;

void tc_region_control_setup(const char *env)
{
	char *end;
	long fd, ppid;
	struct stat st;

	if (!env || !*env)
		return;
	/* "FD:PID": the descriptor, and tacho's pid: only tacho's own child speaks on it
	 * (a program it runs inherits the variable, not the conversation) */
	fd = strtol(env, &end, 10);
	if (end == env || *end != ':' || fd < 0 || fd > 1 << 20)
		goto out_bad;
	ppid = strtol(end + 1, &end, 10);
	if (*end || ppid <= 0)
		goto out_bad;
	if (getppid() != (pid_t)ppid)
		return;
	if (fstat((int)fd, &st) || !S_ISSOCK(st.st_mode))
		goto out_bad;
	ctl_fd = (int)fd;
	ctl_pid = getpid();
	tc_region_ctl_on = true;
	return;
out_bad:
	tc_log(TACHO_LOG_WARN, "TACHO_STAT_CONTROL ignored: '%s' names no control socket "
	       "of tacho stat", env);
}

/* One command and its acknowledgement; a tacho that is gone ends the conversation. */
static void exchange(const char *cmd)
{
	char ack[5];
	size_t got = 0;

	if (send(ctl_fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0)
		goto out_gone;
	while (got < sizeof(ack)) {
		ssize_t n = recv(ctl_fd, ack + got, sizeof(ack) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out_gone;
		got += (size_t)n;
	}
	if (!memcmp(ack, "ack\n", 4))
		return;
out_gone:
	tc_log(TACHO_LOG_WARN, "tacho stat's control socket stopped answering: counting "
	       "is no longer limited to regions");
	tc_region_ctl_on = false;
}

void tc_region_control_enter(void)
{
	pthread_mutex_lock(&ctl_lock);
	if (tc_region_ctl_on && getpid() == ctl_pid && ctl_active++ == 0)
		exchange("enable\n");
	pthread_mutex_unlock(&ctl_lock);
}

void tc_region_control_leave(void)
{
	pthread_mutex_lock(&ctl_lock);
	if (tc_region_ctl_on && getpid() == ctl_pid && ctl_active && --ctl_active == 0)
		exchange("disable\n");
	pthread_mutex_unlock(&ctl_lock);
}
