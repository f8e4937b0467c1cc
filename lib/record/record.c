/* record.c - a sampling session in phases: resolve the events and how each one samples,
 * open them on the engine (one ring per CPU): record-open.c; start the file, run (poll,
 * drain, calibrate, pass signals on), finish: here, with record-drain.c writing the
 * rings' records. The side-band synthesis is sideband.c's. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf/engine.h"
#include "record/payload.h"
#include "record/record-int.h"
#include "symbols/buildid-cache.h"
#include "symbols/symbols.h"
#include "tacho/errors.h"

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tc_record_notify(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	if (s->o->notify)
		s->o->notify(s->o->notify_arg, s->msg);
	else
		tc_log(TACHO_LOG_INFO, "%s", s->msg);
}

/* Whether every target process has ended. */
static bool targets_gone(const struct session *s)
{
	const pid_t *pids;
	size_t n = tc_record_target_pids(s, &pids);

	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], 0) == 0 || errno != ESRCH)
			return false;
	return true;
}

static void write_meta(struct session *s)
{
	const struct tacho_record_opts *o = s->o;
	struct tc_sb sb = TC_SB_INIT;
	struct utsname u;
	char buf[256];
	long long kr = -1;

	tc_sb_init(&sb);
	if (o->argv)
		for (size_t i = 0; o->argv[i]; i++)
			tc_sb_addf(&sb, "%s%s", i ? " " : "", o->argv[i]);
	else if (o->pid) {
		const pid_t *pids;
		size_t n = tc_record_target_pids(s, &pids);
		for (size_t i = 0; i < n; i++)
			tc_sb_addf(&sb, "%s%d", i ? "," : "-p ", (int)pids[i]);
	}
	else
		tc_sb_adds(&sb, "-a");
	if (!sb.oom)
		tc_record_writer_meta(&s->w, "command", sb.buf);
	tc_sb_exit(&sb);
	tc_record_writer_meta(&s->w, "tacho", tacho_version());
	if (uname(&u) == 0) {
		tc_record_writer_meta(&s->w, "kernel", u.release);
		tc_record_writer_meta(&s->w, "hostname", u.nodename);
		tc_record_writer_meta(&s->w, "machine", u.machine);
	}
	if (tc_read_line_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) == 0)
		tc_record_writer_meta(&s->w, "boot_id", buf);
	if (tc_read_int_file("/proc/sys/kernel/kptr_restrict", &kr) == 0) {
		snprintf(buf, sizeof(buf), "%lld", kr);
		tc_record_writer_meta(&s->w, "kptr_restrict", buf);
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns(CLOCK_REALTIME));
	tc_record_writer_meta(&s->w, "start_realtime_ns", buf);
	/* perf's timestamps are the kernel's local clock; CLOCK_MONOTONIC is close */
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns(CLOCK_MONOTONIC));
	tc_record_writer_meta(&s->w, "start_monotonic_ns", buf);
	for (size_t i = 0; i < s->nev; i++)
		tc_record_writer_event(&s->w, (uint32_t)i, s->ev[i].attr.type,
				       s->ev[i].attr.config, s->sample_type, s->ev[i].period,
				       s->ev[i].flags, s->ev[i].name);
	for (size_t i = 0; i < s->nev; i++)
		if (s->ev[i].flags & TC_EVF_RAW)
			tc_record_writer_tpformat(&s->w, (uint32_t)i, s->ev[i].format,
						  s->ev[i].format_len);
}

static void session_free(struct session *s)
{
	tc_perf_list_free(s->list);
	free(s->counts);
	tc_record_offcpu_free(s);
	tc_payload_free(s->payload);
	for (size_t i = 0; i < s->nev; i++) {
		free(s->ev[i].name);
		free(s->ev[i].format);
	}
	free(s->ev);
	tc_sideband_exit(&s->side);
	tc_bidcache_free(s->seen);
	if (s->pidfd >= 0)
		close(s->pidfd);
	tacho_child_free(s->child);
}

/* Phase 3: the file and what is known before the first sample: the meta records, the
 * vDSO, the processes that already run, the choice of periods. 0; -errno with *diag
 * when the file cannot be created; 1 when a write failed (the caller closes and says
 * so). */
static int start_file(struct session *s, const char *out_path, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	int err;

	if (s->hooks && s->hooks->sink)
		err = tc_record_writer_open_sink(&s->w, s->hooks->sink, s->hooks->arg);
	else
		err = tc_record_writer_open(&s->w, out_path);
	if (err)
		return tc_diag_set(diag, out_path, 0, 0, err, "cannot write '%s': %s", out_path,
				   err == -ELOOP ? "it is a symbolic link, which tacho does not "
				   "follow" : tacho_strerror(err));
	write_meta(s);
	tc_sideband_vdso(&s->side);
	if (!s->child_mode && !o->system_wide) {
		const pid_t *pids;
		size_t n = tc_record_target_pids(s, &pids);
		for (size_t i = 0; i < n; i++)
			tc_sideband_process(&s->side, pids[i]);
	} else if (o->system_wide)
		tc_sideband_all(&s->side);
	if (s->hooks && s->hooks->start) {
		err = s->hooks->start(s->hooks->arg, &s->w);
		if (err)
			return tc_diag_set(diag, out_path, 0, 0, err, "cannot start the trace: %s",
					   tacho_strerror(err));
	}
	if (tc_record_writer_flush(&s->w))
		return 1;
	tc_record_describe_choice(s);
	return 0;
}

/* Phase 4a: counting starts: the program's exec (its events enable themselves there),
 * or an explicit enable. 0 or -errno with *diag. */
static int start_target(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	int err, exec_err = 0;

	if (!s->child_mode) {
		tc_perf_list_enable(s->list);
		/* one process: its pidfd wakes the loop when it ends; several are looked
		 * for at every wake-up */
		if (!o->system_wide && !(s->hooks && s->hooks->npids > 1))
			s->pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
		return 0;
	}
	if (o->system_wide)
		tc_perf_list_enable(s->list);
	err = tacho_child_exec(s->child, &exec_err);
	if (err) {
		s->res->exec_err = exec_err;
		tacho_exec_strerror(o->argv[0], exec_err, s->msg, sizeof(s->msg));
		return tc_diag_set(diag, o->argv[0], 0, 0, err, "%s", s->msg);
	}
	s->res->ran = true;
	s->pidfd = (int)syscall(SYS_pidfd_open, tacho_child_pid(s->child), 0);
	return 0;
}

/* A signal from the caller (*o->stop): passed on to the program once, SIGKILL the
 * second time; without a program, the end of the recording. */
static bool take_stop(struct session *s, bool *forwarded, bool *killed)
{
	const struct tacho_record_opts *o = s->o;

	if (!o->stop || !*o->stop)
		return false;
	if (!s->child_mode)
		return true;
	/* take the signal and clear the flag in one step (an atomic exchange cannot lose
	 * a signal that lands in between), so that a second one shows as the flag set
	 * again */
	int sig = __atomic_exchange_n(o->stop, 0, __ATOMIC_SEQ_CST);
	if (!*forwarded) {
		/* pass the signal on and record until the program ends */
		tacho_child_kill(s->child, sig);
		*forwarded = true;
	} else if (!*killed) {
		/* a second signal: the program ignored or is stuck in the first; SIGKILL
		 * cannot be caught, and the file is still finished below */
		tacho_child_kill(s->child, SIGKILL);
		*killed = true;
		tc_record_notify(s, "a second signal: killing the program (SIGKILL); the "
				 "recording is kept");
	}
	return false;
}

/* Phase 4b: until the target ends (or *stop): wait for the rings, drain them at every
 * wake-up and at least every flush_ms, calibrate the periods at 1/20, 1/4 and the end
 * of the window. 0; -errno with *diag when waiting failed (the recording is still
 * finished); 1 when a write failed. */
static int record_loop(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	unsigned flush_ms = o->flush_ms ? o->flush_ms : DEFAULT_FLUSH_MS;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), calib_at = 0, last_flush = t0;
	uint64_t calib_ms = o->calibrate_ms ? o->calibrate_ms : DEFAULT_CALIBRATE_MS;
	unsigned calib_step = 0;
	bool done = false, forwarded = false, killed = false;

	/* calibrate in three steps, at 1/20, 1/4 and all of the window: the provisional
	 * period (1 for software events) then lasts only a few milliseconds, and the
	 * final period comes from the whole window */
	for (size_t e = 0; e < s->nev; e++)
		if (s->ev[e].calibrate)
			calib_at = t0 + calib_ms * 1000000u / 20;
	while (!done) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int timeout = (int)flush_ms, n;
		int extra[2] = { s->pidfd, s->hooks && s->hooks->wake_fd ? *s->hooks->wake_fd : -1 };
		short revents[2] = { 0, 0 }, pid_revents;

		if (calib_at && now >= calib_at) {
			calib_step++;
			tc_record_calibrate(s, calib_step == 3);
			calib_at = calib_step == 1 ? t0 + calib_ms * 1000000u / 4 :
				   calib_step == 2 ? t0 + calib_ms * 1000000u : 0;
			now = now_ns(CLOCK_MONOTONIC);
		}
		/* wake for the next calibration step, not only at the flush interval */
		if (calib_at && calib_at > now && (calib_at - now) / 1000000u < (uint64_t)timeout)
			timeout = (int)((calib_at - now) / 1000000u) + 1;
		else if (calib_at && calib_at <= now)
			timeout = 0;
		if (s->pidfd < 0 && (s->child_mode || !o->system_wide))
			timeout = timeout > 20 ? 20 : timeout;   /* no pidfd: look for the exit often */
		n = tc_perf_list_poll(s->list, timeout, extra, revents, 2);
		pid_revents = revents[0];
		if (n < 0 && n != -EINTR)
			return tc_diag_set(diag, "record", 0, 0, n, "cannot wait for samples (poll): %s",
					   tacho_strerror(n));
		if (take_stop(s, &forwarded, &killed))
			done = true;
		if (s->child_mode) {
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			/* WNOWAIT: look without reaping; tacho_child_wait reaps and reports */
			if (waitid(P_PID, (id_t)tacho_child_pid(s->child), &si,
				   WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
				done = true;
		} else if (!o->system_wide) {
			if (targets_gone(s))
				done = true;
			else if (s->pidfd >= 0 && n > 0 && (pid_revents & POLLIN))
				done = true;
		}
		now = now_ns(CLOCK_MONOTONIC);
		/* drain at every wake-up or timeout: the file lags the program by at most
		 * flush_ms, and on exit there is no wait at all */
		if (done || n > 0 || now - last_flush >= (uint64_t)flush_ms * 1000000u) {
			last_flush = now;
			if (tc_record_drain_all(s, false))
				return 1;
		}
	}
	return 0;
}

/* Phase 5: the program's end, the last records, the losses no record told, the totals.
 * err is what the loop left (a failed wait); returns it, or the wait's error, or 1
 * when a write failed. */
static int finish(struct session *s, int err, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;

	if (s->child_mode) {
		int werr = tacho_child_wait(s->child, &s->res->exit);
		if (werr && !err)
			err = tc_diag_set(diag, o->argv[0], 0, 0, werr,
					  "cannot learn how '%s' ended: %s", o->argv[0],
					  tacho_strerror(werr));
	}
	tc_perf_list_disable(s->list);
	/* a write error wins over the wait's error, which is not one */
	if (tc_record_drain_all(s, true))
		return 1;
	tc_record_account_unreported_lost(s);
	if (tc_record_offcpu_unmatched(s))
		tc_record_notify(s, "offcpu-time: %" PRIu64 " wait%s had not ended when the "
				 "recording did (a thread still blocked, or its switch back in "
				 "lost): not counted", tc_record_offcpu_unmatched(s),
				 tc_record_offcpu_unmatched(s) == 1 ? "" : "s");
	if (s->unparsed)
		tc_log(TACHO_LOG_WARN, "%" PRIu64 " sample records from the kernel were shorter "
		       "than their fields and were dropped", s->unparsed);
	tc_record_writer_finish(&s->w, s->res->samples, s->res->lost, now_ns(CLOCK_MONOTONIC),
				s->child_mode ? s->res->exit.status : 0);
	return err;
}

static void bid_say(void *arg, const char *fmt, ...) TC_PRINTF(2, 3);
static void bid_say(void *arg, const char *fmt, ...)
{
	struct session *s = arg;
	char msg[sizeof(s->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tc_record_notify(s, "%s", msg);
}

/* After the file is complete: the binaries it mapped into the build-id cache. A copy
 * that fails is said and leaves the recording as it is. */
static void store_binaries(struct session *s)
{
	char size[32];

	if (!s->seen)
		return;
	if (tc_bidcache_store(s->seen, s->o->buildid_cache, bid_say, s, &s->res->cached_files,
			      &s->res->cached_bytes) == 0 && s->res->cached_files)
		tc_record_notify(s, "copied %u binar%s (%s) into the build-id cache in %s",
				 s->res->cached_files, s->res->cached_files == 1 ? "y" : "ies",
				 tc_fmt_size(s->res->cached_bytes, size, sizeof(size)),
				 s->o->buildid_cache);
}

/* The first versions: struct tacho_record_opts ends at notify_arg (TC_OPTS_VALID),
 * struct tacho_record_result at choice. */
#define TC_OPTS_V1_tacho_record_opts tc_offsetofend(struct tacho_record_opts, notify_arg)
#define RESULT_SZ_V1 tc_offsetofend(struct tacho_record_result, choice)

int tacho_record(const struct tacho_record_opts *caller_opts, struct tacho_record_result *res,
		 struct tacho_diag *diag)
{
	return tc_record_run(caller_opts, res, NULL, diag);
}

int tc_record_run(const struct tacho_record_opts *caller_opts, struct tacho_record_result *res,
		  const struct tc_record_hooks *hooks, struct tacho_diag *diag)
{
	struct tacho_record_opts opts, *o = &opts;
	struct tacho_record_result result = { .sz = sizeof(result) };
	struct session s;
	const char *out_path;
	int err, cerr;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!caller_opts || !res || res->sz < RESULT_SZ_V1)
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(caller_opts, tacho_record_opts, diag);
	if (err)
		return err;
	/* the caller's versions: options it lacks read as 0, the result is written as far
	 * as its sz goes (at the end, whatever happened: zero when nothing ran) */
	TC_OPTS_COPY(&opts, caller_opts);
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.res = &result;
	s.w.fd = -1;
	s.pidfd = -1;
	s.hooks = hooks;
	tc_sideband_init(&s.side, &s.w);
	if (o->buildid_cache && *o->buildid_cache) {
		err = tc_bidcache_new(&s.seen);
		if (err)
			goto out;
		s.side.seen = s.seen;
	}
	s.child_mode = o->argv && o->argv[0];
	out_path = o->output ? o->output : "tacho.rec";
	if (!s.child_mode && !o->pid && !o->system_wide) {
		err = tc_diag_set(diag, "record", 0, 0, -EINVAL, "nothing to record: give a "
				  "program, a process or all CPUs");
		goto out;
	}
	if (o->period && o->freq) {
		err = tc_diag_set(diag, "record", 0, 0, -EINVAL, "a period and a frequency "
				  "exclude each other");
		goto out;
	}
	if (o->mmap_pages && (o->mmap_pages & (o->mmap_pages - 1))) {
		err = tc_diag_set(diag, "record", 0, 0, -EINVAL, "the ring size must be a power "
				  "of two pages, not %u", o->mmap_pages);
		goto out;
	}
	err = tc_record_setup_call_graph(&s, diag);
	if (err)
		goto out;

	/* phase 1: the events and how each one samples */
	err = tc_record_setup_events(&s, diag);
	if (err)
		goto out;
	/* phase 2: the program held before exec, the events opened on it */
	if (s.child_mode) {
		struct tacho_child_opts co = { .sz = sizeof(co), .forward_signals = false,
					       .env = hooks ? hooks->env : NULL,
					       .inherit_fds = hooks ? hooks->inherit_fds : NULL,
					       .ninherit_fds = hooks ? hooks->ninherit_fds : 0 };
		err = tacho_child_start(o->argv, &co, &s.child);
		if (err) {
			tc_diag_set(diag, o->argv[0], 0, 0, err, "cannot start '%s': %s", o->argv[0],
				    tacho_strerror(err));
			goto out;
		}
	}
	err = tc_record_open_events(&s, diag);
	if (err)
		goto out;
	/* phase 3: the file */
	err = start_file(&s, out_path, diag);
	if (err == 1)
		goto out_write_failed;
	if (err)
		goto out;
	/* phase 4: the recording itself */
	err = start_target(&s, diag);
	if (err) {
		/* no program ran, no recording: the previous file stays (issue 10) */
		tc_record_writer_discard(&s.w);
		goto out;
	}
	err = record_loop(&s, diag);
	if (err == 1)
		goto out_write_failed;
	/* phase 5 */
	err = finish(&s, err, diag);
	if (err == 1)
		goto out_write_failed;
	cerr = tc_record_writer_close(&s.w);
	if (cerr && !err) {
		err = cerr;
		goto out_write_failed_closed;
	}
	result.bytes = s.w.written;
	store_binaries(&s);
	/* the kernel's own symbols of this boot into the user's cache, once a boot: the
	 * report of a recording with kernel samples then maps them instead of making the
	 * kernel format all of /proc/kallsyms (docs/report.md); quietly, since a report
	 * reads /proc/kallsyms as before when there is no copy */
	if (s.kernel_samples && o->buildid_cache)   /* --no-buildid-cache: no cache written */
		tc_kallsyms_cache_prime();
	goto out;
out_write_failed:
	err = 0;
	tc_record_writer_discard(&s.w);
out_write_failed_closed:
	tc_diag_set(diag, out_path, 0, 0, err ? err : s.w.err, "cannot write '%s': %s", out_path,
		    tacho_strerror(err ? err : s.w.err));
	err = err ? err : s.w.err;
out:
	session_free(&s);
	tc_sized_put_sz(res, &result, sizeof(result));
	return err;
}
