/* counters.c - sets of perf events opened on a target in groups: open, enable, disable,
 * reset, read with the time enabled and running, scaling and a status per value. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "perf/perf.h"

/* The counting bits of read_format the engine always asks for. The id lets a group read
 * be mapped back to its members whatever order the kernel lists them in. */
#define CNT_READ_FORMAT                                                                 \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

/* One (pid, cpu) pair the events are opened on: a thread, a child, or a CPU. */
struct cnt_slot {
	pid_t pid;
	int cpu;
};

struct cnt_event {
	char *name;
	struct perf_event_attr attr;   /* as the caller gave it */
	size_t group;                  /* index into groups */
	int *fds;                      /* [nslots], -1 where not open */
	uint64_t *ids;                 /* [nslots] */
	size_t nopen;                  /* slots where it is open */
	int err;                       /* first error of perf_event_open, or 0 */
	unsigned err_flags;            /* TC_EXPLAIN_* context of that error */
	char *why;
};

struct cnt_group {
	size_t *ev;                    /* member indices, in order */
	size_t n;
	int *leader;                   /* [nslots]: fd of the leader there, or -1 */
};

/* Running sums of one event over the slots. */
struct cnt_sum {
	uint64_t raw, ena, run;
	double scaled;
	bool any;
	bool eof;      /* a read gave end-of-file: a pinned event in error state */
};

struct tacho_counters {
	struct tacho_counters_opts opts;
	struct cnt_slot *slots;
	size_t nslots;
	struct cnt_event *ev;
	size_t nev;
	struct cnt_group *groups;
	size_t ngroups;
	bool group_read;               /* groups are read with PERF_FORMAT_GROUP */
	bool inherit;
	uint64_t *buf;                 /* read buffer, big enough for the largest group */
	size_t buf_words;
	struct cnt_sum *sums;          /* [nev]: tacho_counters_read's scratch, no malloc per read */
};

const char *tacho_count_status_name(enum tacho_count_status s)
{
	static const char *const names[] = {
		[TACHO_COUNT_COUNTED] = "counted",
		[TACHO_COUNT_MULTIPLEXED] = "multiplexed",
		[TACHO_COUNT_NOT_COUNTED] = "not counted",
		[TACHO_COUNT_NOT_SUPPORTED] = "not supported",
	};

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

double tacho_count_scale(uint64_t raw, uint64_t enabled_ns, uint64_t running_ns)
{
	if (!running_ns)
		return NAN;
	if (running_ns >= enabled_ns)
		return (double)raw;
	/* 128-bit product: raw * enabled overflows 64 bits after a few seconds of a
	 * cycle counter (2^32 counts times 2^32 ns) */
	return (double)((unsigned __int128)raw * enabled_ns / running_ns) +
	       (double)((unsigned __int128)raw * enabled_ns % running_ns) / (double)running_ns;
}

/* The threads of process pid (0: this process) as slots. */
static int list_threads(pid_t pid, struct cnt_slot **out, size_t *n)
{
	pid_t *tids;
	size_t cnt;
	int err = tc_proc_threads(pid, &tids, &cnt);

	if (err)
		return err;
	*out = calloc(cnt, sizeof(**out));
	if (!*out) {
		free(tids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cnt; i++) {
		(*out)[i].pid = tids[i];
		(*out)[i].cpu = -1;
	}
	*n = cnt;
	free(tids);
	return 0;
}

static int make_slots(struct tacho_counters *c)
{
	const struct tacho_counters_opts *o = &c->opts;
	int *cpus = NULL;
	size_t n = 0;
	int err;

	switch (o->target) {
	case TACHO_TARGET_THREAD:
	case TACHO_TARGET_CHILD:
		if (o->pid < 0 || (o->target == TACHO_TARGET_CHILD && o->pid == 0))
			return -EINVAL;
		c->slots = malloc(sizeof(*c->slots));
		if (!c->slots)
			return -ENOMEM;
		c->slots[0].pid = o->pid;
		c->slots[0].cpu = -1;
		c->nslots = 1;
		return 0;
	case TACHO_TARGET_PROCESS:
		if (o->pid < 0)
			return -EINVAL;
		return list_threads(o->pid, &c->slots, &c->nslots);
	case TACHO_TARGET_CPUS:
		if (o->ncpus) {
			if (!o->cpus)
				return -EINVAL;
			n = o->ncpus;
		} else {
			err = tc_online_cpus(&cpus, &n);
			if (err)
				return err;
		}
		c->slots = calloc(n, sizeof(*c->slots));
		if (!c->slots) {
			free(cpus);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			int cpu = o->ncpus ? o->cpus[i] : cpus[i];
			if (cpu < 0) {
				free(cpus);
				return -EINVAL;
			}
			c->slots[i].pid = -1;
			c->slots[i].cpu = cpu;
		}
		free(cpus);
		c->nslots = n;
		return 0;
	}
	return -EINVAL;
}

/* Groups in order of first appearance; TACHO_GROUP_NONE makes a group of its own. */
static int make_groups(struct tacho_counters *c, const struct tacho_counter_spec *specs)
{
	size_t i, g;

	c->groups = calloc(c->nev ? c->nev : 1, sizeof(*c->groups));
	if (!c->groups)
		return -ENOMEM;
	for (i = 0; i < c->nev; i++) {
		for (g = 0; g < c->ngroups; g++) {
			const struct tacho_counter_spec *first = &specs[c->groups[g].ev[0]];
			if (specs[i].group >= 0 && first->group == specs[i].group)
				break;
		}
		if (g == c->ngroups) {
			c->groups[g].ev = calloc(c->nev, sizeof(size_t));
			c->groups[g].leader = malloc(c->nslots * sizeof(int));
			if (!c->groups[g].ev || !c->groups[g].leader)
				return -ENOMEM;
			c->ngroups++;
		}
		c->groups[g].ev[c->groups[g].n++] = i;
		c->ev[i].group = g;
	}
	return 0;
}

static void close_all(struct tacho_counters *c)
{
	for (size_t i = 0; i < c->nev; i++) {
		for (size_t s = 0; s < c->nslots; s++) {
			if (c->ev[i].fds[s] >= 0)
				close(c->ev[i].fds[s]);
			c->ev[i].fds[s] = -1;
		}
		c->ev[i].nopen = 0;
		c->ev[i].err = 0;
	}
}

/* Fills the attributes the engine owns, for one open. */
static void prepare_attr(const struct tacho_counters *c, const struct cnt_event *e, bool leader,
			 struct perf_event_attr *a)
{
	*a = e->attr;
	a->read_format |= CNT_READ_FORMAT;
	if (c->group_read)
		a->read_format |= PERF_FORMAT_GROUP;
	else
		a->read_format &= ~(uint64_t)PERF_FORMAT_GROUP;
	a->inherit = c->inherit;
	/* The leader starts disabled and the members enabled, so that enabling the leader
	 * starts the whole group at once (perf_event_open(2), "disabled"). For a child,
	 * the kernel enables the leader at exec: not one instruction of tacho's own
	 * fork/exec path is counted. */
	a->disabled = leader;
	a->enable_on_exec = leader && c->opts.target == TACHO_TARGET_CHILD;
}

/* Opens everything. Returns 1 when the kernel refused a group read with inherit and the
 * caller should retry without PERF_FORMAT_GROUP; 0 when done. */
static int open_all(struct tacho_counters *c)
{
	for (size_t s = 0; s < c->nslots; s++) {
		for (size_t g = 0; g < c->ngroups; g++) {
			struct cnt_group *gr = &c->groups[g];
			gr->leader[s] = -1;
			for (size_t m = 0; m < gr->n; m++) {
				struct cnt_event *e = &c->ev[gr->ev[m]];
				struct perf_event_attr a;
				int fd;

				prepare_attr(c, e, gr->leader[s] < 0, &a);
				fd = tc_perf_event_open(&a, c->slots[s].pid, c->slots[s].cpu,
							gr->leader[s], 0);
				if (fd == -EINVAL && c->group_read && c->inherit &&
				    gr->leader[s] < 0) {
					/* Kernels before group reads of inherited events were
					 * allowed refuse the pair: find out whether that is the
					 * reason, without the group format. */
					a.read_format &= ~(uint64_t)PERF_FORMAT_GROUP;
					fd = tc_perf_event_open(&a, c->slots[s].pid,
								c->slots[s].cpu, -1, 0);
					if (fd >= 0) {
						close(fd);
						return 1;
					}
				}
				if (fd < 0) {
					if (fd == -ESRCH && c->opts.target == TACHO_TARGET_PROCESS &&
					    c->nslots > 1) {
						/* the thread ended since /proc listed it */
						tc_log(TACHO_LOG_DEBUG, "thread %d ended before its "
						       "counters opened", (int)c->slots[s].pid);
						continue;
					}
					if (!e->err) {
						e->err = fd;
						e->err_flags =
							(c->slots[s].pid == -1 ? TC_EXPLAIN_CPU_WIDE : 0) |
							(gr->leader[s] >= 0 ? TC_EXPLAIN_GROUP_MEMBER : 0);
					}
					continue;
				}
				if (ioctl(fd, PERF_EVENT_IOC_ID, &e->ids[s]) < 0)
					e->ids[s] = 0;
				e->fds[s] = fd;
				e->nopen++;
				/* A leader that failed to open is reported as not supported and
				 * the next member that opens leads the rest: they still share
				 * their counters as the group asked, where perf stat would give
				 * up on the whole group. */
				if (gr->leader[s] < 0)
					gr->leader[s] = fd;
			}
		}
	}
	return 0;
}

void tacho_counters_free(struct tacho_counters *c)
{
	if (!c)
		return;
	if (c->ev) {
		close_all(c);
		for (size_t i = 0; i < c->nev; i++) {
			free(c->ev[i].name);
			free(c->ev[i].fds);
			free(c->ev[i].ids);
			free(c->ev[i].why);
		}
	}
	if (c->groups) {
		for (size_t g = 0; g < c->ngroups; g++) {
			free(c->groups[g].ev);
			free(c->groups[g].leader);
		}
	}
	free(c->groups);
	free(c->ev);
	free(c->slots);
	free(c->buf);
	free(c->sums);
	free(c);
}

int tacho_counters_open(const struct tacho_counters_opts *opts,
			const struct tacho_counter_spec *specs, size_t n,
			struct tacho_counters **out)
{
	struct tacho_counters *c;
	size_t largest = 1, all_esrch = 0, nopen = 0;
	struct tc_perf_env env;
	bool env_probed = false;
	int err;

	if (!opts || !out || (n && !specs) || opts->sz < offsetof(struct tacho_counters_opts,
								   no_inherit))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memcpy(&c->opts, opts, opts->sz < sizeof(c->opts) ? opts->sz : sizeof(c->opts));
	c->opts.sz = sizeof(c->opts);
	c->inherit = c->opts.target != TACHO_TARGET_CPUS && !c->opts.no_inherit;
	c->group_read = !c->opts.no_group_read;

	err = make_slots(c);
	if (err)
		goto out_free;
	c->nev = n;
	c->ev = calloc(n ? n : 1, sizeof(*c->ev));
	if (!c->ev) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		struct cnt_event *e = &c->ev[i];
		e->fds = malloc(c->nslots * sizeof(int));
		e->ids = calloc(c->nslots, sizeof(uint64_t));
		e->name = tc_strdup(specs[i].name ? specs[i].name : "");
		if (!e->fds || !e->ids || !e->name) {
			err = -ENOMEM;
			goto out_free;
		}
		for (size_t s = 0; s < c->nslots; s++)
			e->fds[s] = -1;
		e->attr = specs[i].attr;
	}
	err = make_groups(c, specs);
	if (err)
		goto out_free;
	for (size_t g = 0; g < c->ngroups; g++)
		if (c->groups[g].n > largest)
			largest = c->groups[g].n;
	c->buf_words = 3 + 2 * largest + 4;
	c->buf = calloc(c->buf_words, sizeof(uint64_t));
	c->sums = calloc(n ? n : 1, sizeof(*c->sums));
	if (!c->buf || !c->sums) {
		err = -ENOMEM;
		goto out_free;
	}

	if (open_all(c) == 1) {
		tc_log(TACHO_LOG_INFO, "this kernel refuses group reads of inherited events: "
		       "reading each event by itself");
		close_all(c);
		c->group_read = false;
		open_all(c);
	}

	for (size_t i = 0; i < n; i++) {
		struct cnt_event *e = &c->ev[i];
		char why[512];
		struct perf_event_attr a;

		if (!e->nopen && !e->err) {
			/* a process target whose threads all ended */
			e->err = -ESRCH;
			e->why = tc_strdup("the target ended before its counters could open");
		} else if (!e->nopen) {
			if (!env_probed) {
				tc_perf_env_probe(&env);
				env_probed = true;
			}
			prepare_attr(c, e, !(e->err_flags & TC_EXPLAIN_GROUP_MEMBER), &a);
			tc_perf_explain(&env, e->err, &a, NULL, e->err_flags, why, sizeof(why));
			e->why = tc_strdup(why);
			tc_log(TACHO_LOG_DEBUG, "cannot open '%s': %s", e->name, why);
		}
		if (e->nopen)
			nopen++;
		else if (e->err == -ESRCH)
			all_esrch++;
	}
	if (n && !nopen && all_esrch == n) {
		err = -ESRCH;
		goto out_free;
	}
	*out = c;
	return 0;

out_free:
	tacho_counters_free(c);
	return err;
}

size_t tacho_counters_count(const struct tacho_counters *c)
{
	return c ? c->nev : 0;
}

size_t tacho_counters_opened(const struct tacho_counters *c)
{
	size_t n = 0;

	for (size_t i = 0; c && i < c->nev; i++)
		n += c->ev[i].nopen > 0;
	return n;
}

static int group_ioctl(struct tacho_counters *c, unsigned long req)
{
	int first = 0;

	for (size_t g = 0; g < c->ngroups; g++) {
		struct cnt_group *gr = &c->groups[g];
		for (size_t s = 0; s < c->nslots; s++) {
			if (gr->leader[s] < 0)
				continue;
			/* With the group flag the ioctl reaches every member and, for inherited
			 * events, every child copy too. */
			if (ioctl(gr->leader[s], req, PERF_IOC_FLAG_GROUP) < 0 && !first)
				first = -errno;
		}
	}
	return first;
}

int tacho_counters_enable(struct tacho_counters *c)
{
	return c ? group_ioctl(c, PERF_EVENT_IOC_ENABLE) : -EINVAL;
}

int tacho_counters_disable(struct tacho_counters *c)
{
	return c ? group_ioctl(c, PERF_EVENT_IOC_DISABLE) : -EINVAL;
}

int tacho_counters_reset(struct tacho_counters *c)
{
	return c ? group_ioctl(c, PERF_EVENT_IOC_RESET) : -EINVAL;
}

static void add_sample(struct cnt_sum *sum, uint64_t val, uint64_t ena, uint64_t run)
{
	sum->raw += val;
	sum->ena += ena;
	sum->run += run;
	if (run)
		sum->scaled += tacho_count_scale(val, ena, run);
	sum->any = true;
}

static int read_fd(int fd, uint64_t *buf, size_t words, size_t *got)
{
	ssize_t r;

	do
		r = read(fd, buf, words * sizeof(uint64_t));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	*got = (size_t)r / sizeof(uint64_t);
	return 0;
}

/* Reads group g on slot s into the sums. */
static int read_group(struct tacho_counters *c, size_t g, size_t s, struct cnt_sum *sums)
{
	struct cnt_group *gr = &c->groups[g];
	uint64_t *b = c->buf;
	size_t got;
	int err;

	if (gr->leader[s] < 0)
		return 0;
	if (c->group_read) {
		/* { nr, time_enabled, time_running, { value, id } [nr] } */
		err = read_fd(gr->leader[s], b, c->buf_words, &got);
		if (err)
			return err;
		if (got == 0) {
			/* perf_event_open(2), "pinned": a pinned group that could not get
			 * its counters is in error state and read() returns 0 until it is
			 * enabled again; it counted nothing, the others are still good */
			for (size_t m = 0; m < gr->n; m++)
				if (c->ev[gr->ev[m]].fds[s] >= 0)
					sums[gr->ev[m]].eof = true;
			return 0;
		}
		if (got < 3 || b[0] > gr->n || got < 3 + 2 * b[0])
			return -EIO;
		/* the kernel lists the members in the order they joined the group, so
		 * the search for an id starts after the previous match: one comparison
		 * per member in the usual case, whatever the order in any case */
		for (uint64_t k = 0, from = 0; k < b[0]; k++) {
			uint64_t val = b[3 + 2 * k], id = b[4 + 2 * k];
			for (size_t t = 0; t < gr->n; t++) {
				size_t m = (from + t) % gr->n, i = gr->ev[m];
				if (c->ev[i].fds[s] >= 0 && c->ev[i].ids[s] == id) {
					add_sample(&sums[i], val, b[1], b[2]);
					from = m + 1;
					break;
				}
			}
		}
		return 0;
	}
	for (size_t m = 0; m < gr->n; m++) {
		size_t i = gr->ev[m];
		if (c->ev[i].fds[s] < 0)
			continue;
		/* { value, time_enabled, time_running, id } */
		err = read_fd(c->ev[i].fds[s], b, c->buf_words, &got);
		if (err)
			return err;
		if (got == 0) {
			sums[i].eof = true;   /* a pinned event in error state, as above */
			continue;
		}
		if (got < 4)
			return -EIO;
		add_sample(&sums[i], b[0], b[1], b[2]);
	}
	return 0;
}

int tacho_counters_read(struct tacho_counters *c, struct tacho_count *out, size_t n)
{
	struct cnt_sum *sums;
	int err = 0;

	if (!c || (n && !out))
		return -EINVAL;
	if (n > c->nev)
		n = c->nev;
	sums = c->sums;
	memset(sums, 0, c->nev * sizeof(*sums));
	for (size_t g = 0; g < c->ngroups && !err; g++)
		for (size_t s = 0; s < c->nslots && !err; s++)
			err = read_group(c, g, s, sums);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct cnt_event *e = &c->ev[i];
		struct tacho_count *o = &out[i];

		memset(o, 0, sizeof(*o));
		o->name = e->name;
		o->value = NAN;
		if (!e->nopen) {
			o->status = TACHO_COUNT_NOT_SUPPORTED;
			o->err = e->err;
			o->why = e->why;
			continue;
		}
		o->raw = sums[i].raw;
		o->enabled_ns = sums[i].ena;
		o->running_ns = sums[i].run;
		if (sums[i].eof) {
			/* on one slot at least it counted nothing: a sum of the others
			 * would be a silent undercount */
			o->status = TACHO_COUNT_NOT_COUNTED;
			o->why = "the pinned event (':D') could not get a counter and is in "
				 "error state (other events or the NMI watchdog hold the "
				 "counters: drop ':D', or free them)";
			continue;
		}
		if (!sums[i].run) {
			o->status = TACHO_COUNT_NOT_COUNTED;
			o->why = sums[i].ena ? "the event was enabled but never got a counter "
					       "(too many events at once: use fewer, or fewer groups)"
					     : "the event was never enabled (the program never ran, "
					       "or counting was never started)";
			continue;
		}
		o->coverage = (double)sums[i].run / (double)sums[i].ena;
		if (sums[i].run >= sums[i].ena) {
			o->status = TACHO_COUNT_COUNTED;
			o->value = (double)sums[i].raw;
			o->coverage = 1.0;
		} else {
			o->status = TACHO_COUNT_MULTIPLEXED;
			o->value = sums[i].scaled;
		}
	}
	return 0;
}

/* --- internal accessors for the regions and sampling code (perf.h) --- */

size_t tc_counters_nslots(const struct tacho_counters *c)
{
	return c->nslots;
}

int tc_counters_fd(const struct tacho_counters *c, size_t ev, size_t slot)
{
	if (ev >= c->nev || slot >= c->nslots)
		return -1;
	return c->ev[ev].fds[slot];
}

int tc_counters_slot(const struct tacho_counters *c, size_t slot, pid_t *pid, int *cpu)
{
	if (slot >= c->nslots)
		return -EINVAL;
	*pid = c->slots[slot].pid;
	*cpu = c->slots[slot].cpu;
	return 0;
}

bool tc_counters_group_read(const struct tacho_counters *c)
{
	return c->group_read;
}

int tacho_counters_open_evlist(const struct tacho_counters_opts *opts,
			       const struct tacho_evlist *list, const int *groups,
			       struct tacho_counters **out)
{
	size_t n = tacho_evlist_count(list);
	struct tacho_counter_spec *specs;
	int err = 0;

	if (!list)
		return -EINVAL;
	specs = calloc(n ? n : 1, sizeof(*specs));
	if (!specs)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		specs[i].name = tacho_evlist_name(list, i);
		err = tacho_evlist_attr(list, i, &specs[i].attr);
		if (groups) {
			specs[i].group = groups[i];
		} else {
			/* the user's {a,b}: the leader's index names the group */
			int leader = tacho_evlist_group_leader(list, i);
			specs[i].group = leader >= 0 ? leader : TACHO_GROUP_NONE;
		}
	}
	if (!err)
		err = tacho_counters_open(opts, specs, n, out);
	free(specs);
	return err;
}
