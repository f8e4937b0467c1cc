/* timeline-load.c - a trace file read into threads, channels and items in time order,
 * and the delta table computed from them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/recfile.h"
#include "timeline/timeline.h"
#include "tacho/errors.h"
#include "tacho/timeline.h"

static int channel_of(struct tacho_timeline *t, const char *name, uint32_t kind, uint32_t *out)
{
	uint32_t id;
	int err;

	if (tc_strpool_find(&t->names, name, &id)) {
		*out = id;
		return 0;
	}
	if (t->nch == t->ach) {
		size_t a = t->ach ? t->ach * 2 : 16;
		struct tc_tl_channel *c = realloc(t->ch, a * sizeof(*c));
		if (!c)
			return -ENOMEM;
		t->ch = c;
		t->ach = a;
	}
	err = tc_strpool_intern(&t->names, name, &id);
	if (err)
		return err;
	t->ch[id].name = tc_strpool_str(&t->names, id);
	t->ch[id].kind = kind;
	t->ch[id].count = 0;
	t->nch++;
	*out = id;
	return 0;
}

/* Grows a table of uint32_t indexes so that index i exists (new ones UINT32_MAX). */
static int map_put(uint32_t **map, size_t *n, uint32_t i, uint32_t v)
{
	if (i >= *n) {
		size_t a = *n ? *n : 16;
		while (a <= i)
			a *= 2;
		if (a > (1u << 24))
			return -TACHO_ECORRUPT;
		uint32_t *m = realloc(*map, a * sizeof(*m));
		if (!m)
			return -ENOMEM;
		for (size_t k = *n; k < a; k++)
			m[k] = UINT32_MAX;
		*map = m;
		*n = a;
	}
	(*map)[i] = v;
	return 0;
}

static int thread_note(struct tacho_timeline *t, uint32_t pid, uint32_t tid, const char *comm)
{
	struct tc_tl_thread *th = NULL;

	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			th = &t->threads[i];
	if (!th) {
		if (t->nthreads == t->athreads) {
			size_t a = t->athreads ? t->athreads * 2 : 8;
			struct tc_tl_thread *n = realloc(t->threads, a * sizeof(*n));
			if (!n)
				return -ENOMEM;
			t->threads = n;
			t->athreads = a;
		}
		th = &t->threads[t->nthreads++];
		memset(th, 0, sizeof(*th));
		th->tid = tid;
	}
	th->pid = pid;
	if (comm)
		snprintf(th->comm, sizeof(th->comm), "%s", comm);
	return 0;
}

static int item_add(struct tacho_timeline *t, const struct tc_tl_item *it)
{
	if (t->n == t->a) {
		size_t a = t->a ? t->a * 2 : 1024;
		struct tc_tl_item *n = realloc(t->items, a * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->items = n;
		t->a = a;
	}
	t->items[t->n++] = *it;
	if (it->kind != TC_TL_END)
		t->ch[it->chan].count++;
	return thread_note(t, it->pid, it->tid, NULL);
}

static int item_cmp(const void *a, const void *b)
{
	const struct tc_tl_item *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* equal times keep the file's order (which is each thread's order) */
	return x < y ? -1 : x > y;
}

/* A payload belongs to the event's sample just before it; its bytes are kept (the
 * file's are not), 8-aligned so that the decoder reads aligned numbers. */
static int add_raw(struct tacho_timeline *t, const struct tc_rec *r)
{
	static const unsigned char zeros[8];
	struct tc_tl_item *it = t->n ? &t->items[t->n - 1] : NULL;

	if (!t->after_sample || !it || it->kind != TC_TL_EVENT || it->event != r->u.raw.event ||
	    it->raw_size)
		return -TACHO_ECORRUPT;
	if (!r->u.raw.size)
		return 0;
	it->raw_off = t->payloads.len;
	it->raw_size = (uint32_t)r->u.raw.size;
	tc_sb_add(&t->payloads, r->u.raw.data, r->u.raw.size);
	if (r->u.raw.size & 7)
		tc_sb_add(&t->payloads, zeros, 8 - (r->u.raw.size & 7));
	return t->payloads.oom ? -ENOMEM : 0;
}

/* The kernel's ring that lost them: its CPU, or none known (the count's own). */
static int lost_add(struct tacho_timeline *t, const struct tc_rec *r)
{
	uint64_t n = r->u.lost.lost;
	uint32_t cpu = r->u.lost.cpu;

	if (__builtin_add_overflow(t->lost, n, &t->lost))
		return -EOVERFLOW;   /* told by the caller, with the record's place */
	/* a CPU number past any machine's is no CPU anyone can find */
	if (cpu == TC_LOST_NO_CPU || cpu >= 4096) {
		t->lost_nocpu += n;
		return 0;
	}
	if (cpu >= t->nlost_cpu) {
		uint64_t *v = realloc(t->lost_cpu, (cpu + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + t->nlost_cpu, 0, (cpu + 1 - t->nlost_cpu) * sizeof(*v));
		t->lost_cpu = v;
		t->nlost_cpu = cpu + 1;
	}
	t->lost_cpu[cpu] += n;
	return 0;
}

const char *tc_tl_lost_words(const struct tacho_timeline *t, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t c = 0; c < t->nlost_cpu && len < size; c++)
		if (t->lost_cpu[c])
			len += (size_t)snprintf(buf + len, size - len, "%scpu%zu %llu",
						len ? ", " : "", c,
						(unsigned long long)t->lost_cpu[c]);
	if (t->lost_nocpu && len < size)
		snprintf(buf + len, size - len, "%s%llu on no known CPU", len ? ", " : "",
			 (unsigned long long)t->lost_nocpu);
	return buf;
}

static int load_record(struct tacho_timeline *t, const struct tc_rec *r, const char *name)
{
	struct tc_tl_item it = { 0 };
	uint32_t c;
	int err;

	switch (r->type) {
	case TC_REC_META: {
		size_t pos = 0;
		const char *k, *v;
		while (tc_rec_meta_next(r, &pos, &k, &v))
			if (!strcmp(k, "trace-clock")) {
				t->traced = true;
				t->clock_known = !strcmp(v, "perf") || !strcmp(v, "monotonic-raw");
			} else if (!strcmp(k, "trace-ring-full")) {
				t->wait_full = !strcmp(v, "wait");
			} else if (!strcmp(k, "trace-waits")) {
				/* "WAITS NS"; the last one written holds, one that does
				 * not read is left out */
				char buf[64], *sp;
				uint64_t w, ns;
				snprintf(buf, sizeof(buf), "%s", v);
				sp = strchr(buf, ' ');
				if (sp) {
					*sp = '\0';
					if (!tc_parse_u64(buf, &w) && !tc_parse_u64(sp + 1, &ns)) {
						t->waits = w;
						t->waited_ns = ns;
					}
				}
			}
		return 0;
	}
	case TC_REC_EVENT:
		/* a trace without -e records perf's dummy event (for the side-band): it
		 * never fires and is no channel */
		if (!strcmp(r->u.event.name, "dummy"))
			return 0;
		if (!strcmp(r->u.event.name, "sched:sched_switch"))
			t->sched_switch = r->u.event.index;
		else if (!strcmp(r->u.event.name, "sched:sched_wakeup"))
			t->sched_wakeup = r->u.event.index;
		else if (!strcmp(r->u.event.name, "sched:sched_wakeup_new"))
			t->sched_wakeup_new = r->u.event.index;
		err = channel_of(t, r->u.event.name, TC_TL_EVENT, &c);
		return err ? err : map_put(&t->event_chan, &t->nevent, r->u.event.index, c);
	case TC_REC_CHANNEL:
		err = channel_of(t, r->u.channel.name, 0, &c);
		return err ? err : map_put(&t->area_chan, &t->narea, r->u.channel.index, c);
	case TC_REC_COMM:
		return thread_note(t, r->u.comm.pid, r->u.comm.tid, r->u.comm.comm);
	case TC_REC_MARK:
		if (r->u.mark.channel >= t->narea || t->area_chan[r->u.mark.channel] == UINT32_MAX)
			return -TACHO_ECORRUPT;
		if (r->u.mark.kind < TC_TL_MARK || r->u.mark.kind > TC_TL_COUNTER)
			return -TACHO_ECORRUPT;
		it.time = r->u.mark.time;
		it.value = r->u.mark.value;
		it.pid = r->u.mark.pid;
		it.tid = r->u.mark.tid;
		it.cpu = UINT32_MAX;
		it.chan = t->area_chan[r->u.mark.channel];
		it.kind = r->u.mark.kind;
		if (!t->ch[it.chan].kind)
			t->ch[it.chan].kind = it.kind == TC_TL_END ? TC_TL_BEGIN : it.kind;
		return item_add(t, &it);
	case TC_REC_SAMPLE:
		if (r->u.sample.event >= t->nevent || t->event_chan[r->u.sample.event] == UINT32_MAX)
			return -TACHO_ECORRUPT;
		it.time = r->u.sample.time;
		it.value = r->u.sample.ip;
		it.pid = r->u.sample.pid;
		it.tid = r->u.sample.tid;
		it.cpu = r->u.sample.cpu;
		it.chan = t->event_chan[r->u.sample.event];
		it.kind = TC_TL_EVENT;
		it.event = r->u.sample.event;
		err = item_add(t, &it);
		t->after_sample = !err;
		return err;
	case TC_REC_TPFORMAT:
		if (!t->payload && tc_payload_new(&t->payload))
			return -ENOMEM;
		/* a format refused (tpformat-check.h), or one libtraceevent cannot read,
		 * leaves its payloads undecoded (the views say so, and the notes why); the trace
		 * stands */
		err = tc_payload_add(t->payload, r->u.tpformat.event, r->u.tpformat.text,
				     r->u.tpformat.len);
		if (err == -TACHO_EPARSE)
			tc_sb_addf(&t->notes, "tracepoint format %u of %s (the record at byte "
				   "%llu) %s; its payloads are not decoded\n", r->u.tpformat.event, name,
				   (unsigned long long)r->offset, tc_payload_refusal(t->payload));
		return err == -ENOMEM ? err : 0;
	case TC_REC_RAW:
		return add_raw(t, r);
	case TC_REC_MARK_DROPS:
		t->ring_full = r->u.mark_drops.ring_full;
		t->no_ring = r->u.mark_drops.no_ring;
		t->no_channel = r->u.mark_drops.no_channel;
		t->damaged_entries = r->u.mark_drops.damaged_entries;
		t->damaged_rings = r->u.mark_drops.damaged_rings;
		t->damaged_header = r->u.mark_drops.damaged_header;
		return 0;
	case TC_REC_LOST:
		return lost_add(t, r);
	default:
		return 0;
	}
}

int tc_timeline_load_mem(const void *data, size_t len, const char *name,
			 struct tacho_timeline **out, struct tacho_diag *diag)
{
	struct tc_record_reader rd;
	struct tacho_timeline *t;
	struct tc_rec r;
	int err;

	*out = NULL;
	err = tc_record_reader_init(&rd, data, len, name, diag);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t) {
		tc_record_reader_exit(&rd);
		return -ENOMEM;
	}
	tc_strpool_init(&t->names);
	tc_sb_init(&t->notes);
	tc_sb_init(&t->payloads);
	t->sched_switch = t->sched_wakeup = t->sched_wakeup_new = UINT32_MAX;
	while ((err = tc_record_reader_next(&rd, &r, name, diag)) == 1) {
		bool was_sample = t->after_sample;

		err = load_record(t, &r, name);
		if (was_sample && r.type != TC_REC_SAMPLE)
			t->after_sample = false;
		if (err == -EOVERFLOW) {
			err = tc_diag_set(diag, name, 0, 0, -TACHO_ECORRUPT, "record at byte %llu: "
					  "the lost events add up past 2^64",
					  (unsigned long long)r.offset);
			tc_record_reader_exit(&rd);
			goto out_free;
		}
		if (err == -TACHO_ECORRUPT) {
			err = tc_diag_set(diag, name, 0, 0, err, "record at byte %llu names a "
					  "channel, event, kind or payload the trace does not have",
					  (unsigned long long)r.offset);
			tc_record_reader_exit(&rd);
			goto out_free;
		}
		if (err) {
			tc_record_reader_exit(&rd);
			goto out_free;
		}
	}
	/* nothing kept points into what the reader built (chains, stacks): the trace
	 * keeps marks, payloads and names, copied */
	tc_record_reader_exit(&rd);
	if (err < 0)
		goto out_free;
	t->finished = rd.finished;
	t->truncated = rd.truncated || !rd.finished;
	if (t->truncated)
		tc_sb_addf(&t->notes, "the trace ends early (the recording was stopped): read up "
			   "to byte %llu\n", (unsigned long long)rd.good_end);
	if (!t->traced)
		tc_sb_adds(&t->notes, "not a trace of tacho trace (a recording of tacho record, "
			   "or perf's): its samples are shown as events, and it has no marks "
			   "(tacho report reads it as a profile)\n");
	else if (!t->clock_known && t->n)
		tc_sb_adds(&t->notes, "the trace does not say how its marks' TSC became time\n");
	if (t->ring_full + t->no_ring + t->no_channel)
		tc_sb_addf(&t->notes, "marks dropped: %llu (full ring), %llu (no ring left), %llu "
			   "(no channel left)\n", (unsigned long long)t->ring_full,
			   (unsigned long long)t->no_ring, (unsigned long long)t->no_channel);
	if (t->waits)
		tc_sb_addf(&t->notes, "the program waited for room in its mark rings %llu times, "
			   "%.3f ms in all (--ring-full wait): no mark was dropped for a full ring, "
			   "and the times between its marks include those waits\n",
			   (unsigned long long)t->waits, (double)t->waited_ns / 1e6);
	if (t->lost) {
		char by[512];
		tc_sb_addf(&t->notes, "events lost by the kernel: %llu (%s)\n",
			   (unsigned long long)t->lost, tc_tl_lost_words(t, by, sizeof(by)));
	}
	if (t->damaged_entries || t->damaged_rings || t->damaged_header)
		tc_sb_addf(&t->notes, "the trace is damaged: the program wrote over its trace area "
			   "(%llu entries refused, %llu rings given up%s); the marks there are "
			   "lost\n", (unsigned long long)t->damaged_entries,
			   (unsigned long long)t->damaged_rings,
			   t->damaged_header ? ", its header overwritten" : "");
	if (t->n)
		qsort(t->items, t->n, sizeof(*t->items), item_cmp);
	*out = t;
	return 0;
out_free:
	tacho_timeline_free(t);
	return err;
}

int tacho_timeline_load(const char *path, struct tacho_timeline **out, struct tacho_diag *diag)
{
	char *data;
	size_t len;
	int err;

	if (tc_diag_check(diag) || !path || !out)
		return -EINVAL;
	/* a trace may come from someone else: only a regular file is read (a FIFO would
	 * hang the open, a device would be read without end), as report reads them */
	err = tc_read_regular_file(path, &data, &len, (size_t)1 << 34);
	if (err == -EINVAL)
		return tc_diag_set(diag, path, 0, 0, err, "not a regular file (a FIFO or a "
				   "device): refused");
	if (err)
		return tc_diag_set(diag, path, 0, 0, err, "cannot read: %s", tacho_strerror(err));
	err = tc_timeline_load_mem(data, len, path, out, diag);
	free(data);
	if (err || !tc_payload_has_str_args((*out)->payload))
		return err;
	/* the mappings, so that the views show the strings behind string arguments (the
	 * recording read once more, only for events that have such arguments); a trace
	 * they cannot be read from keeps its addresses, and says so */
	int perr = tc_profile_open(path, &(*out)->prof);
	if (perr == -ENOMEM) {
		tacho_timeline_free(*out);
		*out = NULL;
		return tc_diag_set(diag, path, 0, 0, perr, "cannot load: %s", tacho_strerror(perr));
	}
	if (perr)
		tc_sb_addf(&(*out)->notes, "string arguments shown as addresses only: the "
			   "mappings cannot be read (%s)\n", tacho_strerror(perr));
	return 0;
}

void tacho_timeline_free(struct tacho_timeline *t)
{
	if (!t)
		return;
	free(t->items);
	free(t->ch);
	free(t->area_chan);
	free(t->event_chan);
	free(t->threads);
	free(t->lost_cpu);
	tc_strpool_exit(&t->names);
	tc_sb_exit(&t->notes);
	tc_sb_exit(&t->payloads);
	tc_payload_free(t->payload);
	tc_profile_close(t->prof);
	free(t);
}

uint64_t tacho_timeline_count(const struct tacho_timeline *t, const char *name, int tid)
{
	uint32_t c;
	uint64_t n = 0;

	if (!t || !name || !tc_strpool_find(&t->names, name, &c))
		return 0;
	if (tid <= 0)
		return t->ch[c].count;
	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].chan == c && t->items[i].tid == (uint32_t)tid &&
		    t->items[i].kind != TC_TL_END)
			n++;
	return n;
}

size_t tacho_timeline_items(const struct tacho_timeline *t)
{
	return t ? t->n : 0;
}

/* --- the delta table --- */

static void stats_of(uint64_t *d, size_t n, struct tc_tl_delta *out)
{
	double sum = 0;

	out->count = n;
	if (!n)
		return;
	tc_stats_sort_u64(d, n);
	for (size_t i = 0; i < n; i++)
		sum += (double)d[i];
	out->min = d[0];
	out->max = d[n - 1];
	out->mean = sum / (double)n;
	out->median = tc_stats_percentile_sorted_u64(d, n, 50);
	out->p99 = tc_stats_percentile_sorted_u64(d, n, 99);
}

#define PAIR_CHANNELS 12

/* For each A, the first B at or after it with the same value: an index of B's items by
 * value (each value's items in time order), walked with a cursor per value, since the
 * A's come in time order too. Into d; *k rows. */
static int by_value(const uint64_t *ta, const uint64_t *va, size_t na, const uint64_t *tb,
		    const uint64_t *vb, size_t nb, uint64_t *d, size_t *k)
{
	struct tc_hmap idx;
	uint32_t first;
	size_t *next = malloc((nb ? nb : 1) * sizeof(*next));
	size_t *last = malloc((nb ? nb : 1) * sizeof(*last));
	int err = 0;

	*k = 0;
	if (!next || !last) {
		err = -ENOMEM;
		goto out_free;
	}
	tc_hmap_init(&idx);
	/* chain B's items of one value: idx maps value -> its first item, next[] links
	 * to the following one (SIZE_MAX ends); last[] of the first item is the tail */
	for (size_t i = 0; i < nb; i++) {
		next[i] = SIZE_MAX;
		if (tc_hmap_get(&idx, vb[i], &first)) {
			next[last[first]] = i;
			last[first] = i;
		} else {
			err = tc_hmap_put(&idx, vb[i], (uint32_t)i);
			if (err)
				goto out_exit;
			last[i] = i;
		}
	}
	for (size_t i = 0; i < na; i++) {
		size_t j;
		if (!tc_hmap_get(&idx, va[i], &first))
			continue;
		for (j = first; j != SIZE_MAX && tb[j] < ta[i]; j = next[j])
			;
		if (j != SIZE_MAX)
			d[(*k)++] = tb[j] - ta[i];
	}
out_exit:
	tc_hmap_exit(&idx);
out_free:
	free(next);
	free(last);
	return err;
}

int tc_timeline_deltas(const struct tacho_timeline *t, struct tc_tl_delta **out, size_t *nout)
{
	uint64_t **times = NULL, **values = NULL, *d = NULL;
	size_t *nt = NULL, n = 0, a = 0;
	struct tc_tl_delta *rows = NULL;
	uint32_t pair[PAIR_CHANNELS];
	size_t npair = 0;
	int err = -ENOMEM;

	*out = NULL;
	*nout = 0;
	if (!t->nch)
		return 0;
	times = calloc(t->nch, sizeof(*times));
	values = calloc(t->nch, sizeof(*values));
	nt = calloc(t->nch, sizeof(*nt));
	d = malloc((t->n ? t->n : 1) * sizeof(*d));
	if (!times || !values || !nt || !d)
		goto out_free;
	/* each channel's times, in order (the items are sorted); spans by their begins */
	for (size_t c = 0; c < t->nch; c++) {
		times[c] = malloc((t->ch[c].count ? t->ch[c].count : 1) * sizeof(**times));
		values[c] = malloc((t->ch[c].count ? t->ch[c].count : 1) * sizeof(**values));
		if (!times[c] || !values[c])
			goto out_free;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct tc_tl_item *it = &t->items[i];
		if (it->kind == TC_TL_END)
			continue;
		values[it->chan][nt[it->chan]] = it->value;
		times[it->chan][nt[it->chan]++] = it->time;
	}
	for (size_t c = 0; c < t->nch && npair < PAIR_CHANNELS; c++)
		if (t->ch[c].kind != TC_TL_BEGIN && nt[c])
			pair[npair++] = (uint32_t)c;
	a = t->nch + 2 * npair * npair;
	rows = calloc(a, sizeof(*rows));
	if (!rows)
		goto out_free;
	for (size_t c = 0; c < t->nch; c++) {
		if (nt[c] < 2)
			continue;
		for (size_t i = 1; i < nt[c]; i++)
			d[i - 1] = times[c][i] - times[c][i - 1];
		rows[n].from = rows[n].to = (uint32_t)c;
		stats_of(d, nt[c] - 1, &rows[n]);
		n++;
	}
	/* A -> next B: for each A, the first B at or after it (binary search) */
	for (size_t x = 0; x < npair; x++) {
		for (size_t y = 0; y < npair; y++) {
			uint32_t A = pair[x], B = pair[y];
			size_t k = 0;
			if (A == B)
				continue;
			for (size_t i = 0; i < nt[A]; i++) {
				size_t lo = 0, hi = nt[B];
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (times[B][mid] < times[A][i])
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo < nt[B])
					d[k++] = times[B][lo] - times[A][i];
			}
			if (!k)
				continue;
			rows[n].from = A;
			rows[n].to = B;
			stats_of(d, k, &rows[n]);
			n++;
			if (t->ch[A].kind != TC_TL_MARK || t->ch[B].kind != TC_TL_MARK)
				continue;
			err = by_value(times[A], values[A], nt[A], times[B], values[B], nt[B], d, &k);
			if (err)
				goto out_free;
			if (!k)
				continue;
			rows[n].from = A;
			rows[n].to = B;
			rows[n].by_value = true;
			stats_of(d, k, &rows[n]);
			n++;
		}
	}
	*out = rows;
	*nout = n;
	rows = NULL;
	err = 0;
out_free:
	for (size_t c = 0; c < t->nch; c++) {
		if (times)
			free(times[c]);
		if (values)
			free(values[c]);
	}
	free(times);
	free(values);
	free(nt);
	free(d);
	free(rows);
	return err;
}
