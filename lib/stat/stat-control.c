/* stat-control.c - tacho stat's side of its control channels: counting only inside a
 * program's regions (the program's libtacho asks over a socketpair, region-control.c),
 * perf's --control (commands read from a descriptor, "ack\n\0" written to another) and
 * perf's -D (enable after a delay, or never by itself). A helper thread answers them by
 * enabling and disabling the session's counters while the program runs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "stat/stat.h"
#include "util/util.h"
#include "tacho/counters.h"

void tc_stat_control_init(struct tc_stat_control *k)
{
	memset(k, 0, sizeof(*k));
	k->sock[0] = k->sock[1] = k->wake[0] = k->wake[1] = -1;
	k->ctl_fd = k->ack_fd = -1;
}

int tc_stat_control_prepare(struct tc_stat_control *k, bool regions, int ctl_fd, int ack_fd,
			    int delay_ms)
{
	k->ctl_fd = ctl_fd;
	k->ack_fd = ack_fd;
	k->delay_ms = delay_ms;
	k->regions = regions;
	if (pipe2(k->wake, O_CLOEXEC))
		return -errno;
	if (!regions)
		return 0;
	/* tacho's end closes on exec, the program's end stays open across it */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, k->sock))
		return -errno;
	if (fcntl(k->sock[1], F_SETFD, 0))
		return -errno;
	snprintf(k->env, sizeof(k->env), "TACHO_STAT_CONTROL=%d:%d", k->sock[1], (int)getpid());
	k->envp[0] = k->env;
	k->envp[1] = NULL;
	return 0;
}

/* The program has its end of the socket: ours goes. */
void tc_stat_control_forked(struct tc_stat_control *k)
{
	if (k->sock[1] >= 0)
		close(k->sock[1]);
	k->sock[1] = -1;
}

static void ack(int fd)
{
	/* perf's acknowledgement, NUL included */
	static const char msg[] = "ack\n";

	if (fd < 0)
		return;
	if (send(fd, msg, sizeof(msg), MSG_NOSIGNAL) < 0 && errno == ENOTSOCK &&
	    write(fd, msg, sizeof(msg)) < 0)
		tc_log(TACHO_LOG_DEBUG, "cannot acknowledge a control command: %s",
		       strerror(errno));
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The counters on or off, and the wall time they were on kept: the time a switched
 * session counted, which its rates are per (a thread's time enabled runs only while
 * it runs, and adds up over threads and CPUs). */
static void switch_on(struct tc_stat_control *k)
{
	tacho_counters_enable(k->c);
	k->enables++;
	if (!k->on_since)
		k->on_since = mono_ns();
}

static void switch_off(struct tc_stat_control *k)
{
	tacho_counters_disable(k->c);
	k->disables++;
	if (k->on_since) {
		k->on_ns += mono_ns() - k->on_since;
		k->on_since = 0;
	}
}

/* Runs the commands of a buffer (each ends with a newline or a NUL); returns how many
 * bytes it used. */
static size_t run_commands(struct tc_stat_control *k, char *buf, size_t len, int ack_fd)
{
	size_t used = 0;

	for (;;) {
		size_t n = 0;

		while (used + n < len && buf[used + n] != '\n' && buf[used + n] != '\0')
			n++;
		if (used + n == len)
			return used;
		buf[used + n] = '\0';
		if (!strcmp(buf + used, "enable")) {
			switch_on(k);
			ack(ack_fd);
		} else if (!strcmp(buf + used, "disable")) {
			switch_off(k);
			ack(ack_fd);
		} else if (!strcmp(buf + used, "ping")) {
			ack(ack_fd);
		} else if (n) {
			tc_log(TACHO_LOG_WARN, "control: unknown command '%.40s' (tacho "
			       "knows enable, disable and ping)", buf + used);
			ack(ack_fd);
		}
		used += n + 1;
	}
}

struct source {
	int fd, ack_fd;
	char buf[256];
	size_t len;
	bool open;
};

static void *control_main(void *arg)
{
	struct tc_stat_control *k = arg;
	struct source src[2] = {
		{ .fd = k->sock[0], .ack_fd = k->sock[0], .open = k->sock[0] >= 0 },
		{ .fd = k->ctl_fd, .ack_fd = k->ack_fd, .open = k->ctl_fd >= 0 },
	};
	struct timespec t0;
	bool delayed = k->delay_ms > 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p[3] = { { .fd = k->wake[0], .events = POLLIN } };
		int timeout = -1, n;

		for (int i = 0; i < 2; i++)
			p[1 + i] = (struct pollfd){ .fd = src[i].open ? src[i].fd : -1,
						    .events = POLLIN };
		if (delayed) {
			struct timespec now;
			long long ms;
			clock_gettime(CLOCK_MONOTONIC, &now);
			ms = (now.tv_sec - t0.tv_sec) * 1000LL +
			     (now.tv_nsec - t0.tv_nsec) / 1000000;
			if (ms >= k->delay_ms) {
				/* -D MSEC: the delay is over */
				switch_on(k);
				delayed = false;
				continue;
			}
			timeout = (int)(k->delay_ms - ms);
		}
		n = poll(p, 3, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[0].revents)
			break;
		for (int i = 0; i < 2; i++) {
			struct source *s = &src[i];
			ssize_t got;

			if (!p[1 + i].revents)
				continue;
			got = read(s->fd, s->buf + s->len, sizeof(s->buf) - 1 - s->len);
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				s->open = false;   /* the program ended, or the writer left */
				continue;
			}
			s->len += (size_t)got;
			size_t used = run_commands(k, s->buf, s->len, s->ack_fd);
			memmove(s->buf, s->buf + used, s->len - used);
			s->len -= used;
			if (s->len == sizeof(s->buf) - 1) {
				tc_log(TACHO_LOG_WARN, "control: a command longer than %zu "
				       "bytes was dropped", sizeof(s->buf) - 1);
				s->len = 0;
			}
		}
	}
	return NULL;
}

int tc_stat_control_start(struct tc_stat_control *k, struct tacho_counters *c)
{
	sigset_t all, old;
	int err;

	k->c = c;
	/* perf's -D 0 and --control alone start counting at once; --regions and -D -1
	 * wait for a command */
	if (!k->regions && k->delay_ms == 0) {
		err = tacho_counters_enable(c);
		if (err)
			return err;
		k->enables++;
		k->on_since = mono_ns();
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&k->thread, NULL, control_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	k->started = err == 0;
	return err;
}

void tc_stat_control_exit(struct tc_stat_control *k)
{
	if (k->started) {
		if (write(k->wake[1], "x", 1) < 0)
			tc_log(TACHO_LOG_DEBUG, "cannot wake the control thread: %s",
			       strerror(errno));
		pthread_join(k->thread, NULL);
		k->started = false;
	}
	if (k->on_since) {
		k->on_ns += mono_ns() - k->on_since;
		k->on_since = 0;
	}
	for (int i = 0; i < 2; i++) {
		if (k->sock[i] >= 0)
			close(k->sock[i]);
		if (k->wake[i] >= 0)
			close(k->wake[i]);
		k->sock[i] = k->wake[i] = -1;
	}
}
