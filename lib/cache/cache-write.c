/* cache-write.c - the writers of a memory-hierarchy measurement (what `tacho cache`
 * prints): the table for people, the CSV, the JSON document of docs/schemas.md, and
 * the SVG picture of the latency curve with the levels and the claims marked. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "output/output.h"

static const char *const curve_names[TACHO_CACHE_CURVE_COUNT] = {
	[TACHO_CACHE_CURVE_LATENCY] = "latency",
	[TACHO_CACHE_CURVE_RANDOM] = "random",
	[TACHO_CACHE_CURVE_PAGES] = "pages",
	[TACHO_CACHE_CURVE_PAGES_HUGE] = "pages_huge",
};

/* "L1d", "L2"; "L3?" for a level the curve shows and nobody claims */
static void level_name(const struct tacho_cache_level *lv, char *buf, size_t size)
{
	snprintf(buf, size, "L%u%s%s", lv->level, lv->type == TACHO_CACHE_DATA ? "d" :
		 lv->type == TACHO_CACHE_INSTRUCTION ? "i" : "", lv->agrees < 0 ? "?" : "");
}

static void fmt_ns(double ns, char *buf, size_t size)
{
	if (!isfinite(ns))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3g ns", ns);
}

static void fmt_size_or(uint64_t b, char *buf, size_t size)
{
	if (b)
		tc_cache_fmt_bytes(b, buf, size);
	else
		snprintf(buf, size, "-");
}

static void fmt_gbs(double v, char *buf, size_t size)
{
	if (!isfinite(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3g", v);
}

/* --- the table --- */

static int table_levels(FILE *f, const struct tacho_cache_result *r)
{
	struct tc_table *t = tc_table_new(7);
	int err;

	if (!t)
		return -ENOMEM;
	for (unsigned c = 2; c <= 5; c++)
		tc_table_align_right(t, c, true);
	err = tc_table_add(t, (const char *const[]){ "level", "type", "measured", "latency",
						     "CPUID", "sysfs", "agrees" });
	for (size_t i = 0; i < r->nlevels && !err; i++) {
		const struct tacho_cache_level *lv = &r->levels[i];
		char name[16], m[32], lat[96], c1[32], c2[32], ag[300];

		level_name(lv, name, sizeof(name));
		fmt_size_or(lv->bytes, m, sizeof(m));
		if (lv->bytes && isfinite(lv->cycles))
			snprintf(lat, sizeof(lat), "%.3g ns  %.3g ticks  %.3g cycles", lv->ns,
				 lv->ticks, lv->cycles);
		else if (lv->bytes)
			snprintf(lat, sizeof(lat), "%.3g ns  %.3g ticks", lv->ns, lv->ticks);
		else
			snprintf(lat, sizeof(lat), "-");
		fmt_size_or(lv->cpuid_bytes, c1, sizeof(c1));
		fmt_size_or(lv->sysfs_bytes, c2, sizeof(c2));
		if (lv->agrees < 0)
			snprintf(ag, sizeof(ag), "-%s%s", lv->note[0] ? ": " : "", lv->note);
		else if (lv->agrees)
			snprintf(ag, sizeof(ag), "yes");
		else
			snprintf(ag, sizeof(ag), "NO: %s", lv->note);
		err = tc_table_add(t, (const char *const[]){ name, tacho_cache_type_name(lv->type), m,
							     lat, c1, c2, ag });
	}
	if (!err && r->mem.seen) {
		char from[48], lat[96];

		tc_cache_fmt_bytes(r->mem.first_bytes, from, sizeof(from));
		if (isfinite(r->mem.cycles))
			snprintf(lat, sizeof(lat), "%s%.3g ns  %.3g ticks  %.3g cycles",
				 r->mem.flat ? "" : ">= ", r->mem.ns, r->mem.ticks, r->mem.cycles);
		else
			snprintf(lat, sizeof(lat), "%s%.3g ns  %.3g ticks", r->mem.flat ? "" : ">= ",
				 r->mem.ns, r->mem.ticks);
		snprintf(from + strlen(from), sizeof(from) - strlen(from), " up");
		err = tc_table_add(t, (const char *const[]){ "memory", "", from, lat, "", "", "" });
	}
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	return err;
}

static int bw_row(struct tc_table *t, const char *name, const struct tacho_cache_bandwidth *bw)
{
	char ws[32], rd[16], wr[16], cp[16], rda[16], wra[16], cpa[16];

	if (!bw->bytes)
		return 0;
	tc_cache_fmt_bytes(bw->bytes, ws, sizeof(ws));
	fmt_gbs(bw->read, rd, sizeof(rd));
	fmt_gbs(bw->write, wr, sizeof(wr));
	fmt_gbs(bw->copy, cp, sizeof(cp));
	fmt_gbs(bw->read_all, rda, sizeof(rda));
	fmt_gbs(bw->write_all, wra, sizeof(wra));
	fmt_gbs(bw->copy_all, cpa, sizeof(cpa));
	return tc_table_add(t, (const char *const[]){ name, ws, rd, wr, cp, rda, wra, cpa });
}

static int table_bandwidth(FILE *f, const struct tacho_cache_result *r)
{
	struct tc_table *t;
	char all[32];
	int err = 0;
	bool any = r->mem.bw.bytes != 0;

	for (size_t i = 0; i < r->nlevels; i++)
		any |= r->levels[i].bw.bytes != 0;
	if (!any)
		return 0;
	t = tc_table_new(8);
	if (!t)
		return -ENOMEM;
	for (unsigned c = 1; c < 8; c++)
		tc_table_align_right(t, c, true);
	fprintf(f, "\nbandwidth, GB/s (%s kernels; copy counts the bytes read and written; "
		"all: one thread on each of %u CPUs, each on its own share of the level):\n\n",
		r->about.kernel ? r->about.kernel : "?", r->about.threads);
	snprintf(all, sizeof(all), "all %u", r->about.threads);
	err = tc_table_add(t, (const char *const[]){ "level", "set", "read", "write", "copy",
						     "read, all", "write, all", "copy, all" });
	for (size_t i = 0; i < r->nlevels && !err; i++) {
		char name[16];

		level_name(&r->levels[i], name, sizeof(name));
		err = bw_row(t, name, &r->levels[i].bw);
	}
	if (!err)
		err = bw_row(t, "memory", &r->mem.bw);
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	return err;
}

static int table_tlbs(FILE *f, const struct tacho_cache_result *r)
{
	struct tc_table *t;
	int err;

	if (!r->ncurve[TACHO_CACHE_CURVE_PAGES])
		return 0;
	fprintf(f, "\nTLBs (4 KiB pages; a chase with one load per page, the caches' share "
		"taken out):\n\n");
	if (!r->ntlbs) {
		fprintf(f, "  no step found\n");
		return 0;
	}
	t = tc_table_new(7);
	if (!t)
		return -ENOMEM;
	for (unsigned c = 1; c <= 5; c++)
		tc_table_align_right(t, c, true);
	err = tc_table_add(t, (const char *const[]){ "level", "entries", "reach", "a load",
						     "a miss adds", "CPUID", "agrees" });
	for (size_t i = 0; i < r->ntlbs && !err; i++) {
		const struct tacho_cache_tlb *b = &r->tlbs[i];
		char lv[8], e[16], reach[32], ns[32], miss[32], c[16];

		snprintf(lv, sizeof(lv), "%u", b->level);
		snprintf(e, sizeof(e), "%u", b->entries);
		tc_cache_fmt_bytes(b->reach_bytes, reach, sizeof(reach));
		fmt_ns(b->ns, ns, sizeof(ns));
		if (isfinite(b->miss_ns))
			snprintf(miss, sizeof(miss), "%+.3g ns", b->miss_ns);
		else
			snprintf(miss, sizeof(miss), "-");
		if (b->cpuid_entries)
			snprintf(c, sizeof(c), "%u", b->cpuid_entries);
		else
			snprintf(c, sizeof(c), "-");
		err = tc_table_add(t, (const char *const[]){ lv, e, reach, ns, miss, c,
							     b->agrees < 0 ? "-" : b->agrees ? "yes" : "NO" });
	}
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	return err;
}

static void print_list(FILE *f, const char *title, char *const *v, size_t n)
{
	if (!n)
		return;
	fprintf(f, "\n%s:\n", title);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  - %s\n", v[i]);
}

static int write_table(FILE *f, const struct tacho_cache_result *r)
{
	const struct tacho_cache_about *a = &r->about;
	int err;

	fprintf(f, "memory hierarchy of CPU %d%s%s%s, measured by a pointer chase "
		"(sizes to %.0f %%: %u points per octave; the best of %u sweeps of %u samples)\n\n",
		a->cpu, a->brand[0] ? " (" : "", a->brand, a->brand[0] ? ")" : "",
		100 * (a->step - 1), a->points_per_octave, a->rounds, a->samples);
	err = table_levels(f, r);
	if (!err)
		err = table_bandwidth(f, r);
	if (!err)
		err = table_tlbs(f, r);
	if (err)
		return err;
	fprintf(f, "\nhow it went: %.2f s on CPU %d; TSC %.4g GHz (%s)", a->seconds, a->cpu,
		a->tsc_hz / 1e9, a->tsc_source ? a->tsc_source : "unknown");
	if (a->core_hz > 0)
		fprintf(f, ", core clock about %.3g GHz (%.3g to %.3g)", a->core_hz / 1e9,
			a->core_hz_min / 1e9, a->core_hz_max / 1e9);
	fprintf(f, "; huge pages %.0f %%; %u samples retaken", 100 * a->huge_fraction, a->discarded);
	if (isfinite(a->steal_pct))
		fprintf(f, "; steal %.1f %%", a->steal_pct);
	fprintf(f, "\n");
	print_list(f, "warnings", r->warnings, r->nwarnings);
	print_list(f, "notes", r->notes, r->nnotes);
	return 0;
}

/* --- JSON --- */

static void json_num(struct tc_json *j, const char *key, double v)
{
	if (isfinite(v))
		tc_json_double(j, key, v);
	else
		tc_json_null(j, key);
}

static void json_size(struct tc_json *j, const char *key, uint64_t b)
{
	if (b)
		tc_json_uint(j, key, b);
	else
		tc_json_null(j, key);
}

static void json_kib(struct tc_json *j, const char *key, uint64_t b)
{
	if (b)
		tc_json_double(j, key, (double)b / 1024);
	else
		tc_json_null(j, key);
}

static void json_agrees(struct tc_json *j, int agrees)
{
	if (agrees < 0)
		tc_json_null(j, "agrees");
	else
		tc_json_bool(j, "agrees", agrees);
}

static void json_bw(struct tc_json *j, const struct tacho_cache_bandwidth *bw)
{
	if (!bw->bytes) {
		tc_json_null(j, "bandwidth");
		return;
	}
	tc_json_obj_begin(j, "bandwidth");
	tc_json_uint(j, "bytes", bw->bytes);
	tc_json_uint(j, "bytes_all", bw->bytes_all);
	tc_json_uint(j, "threads", bw->threads);
	json_num(j, "read_gbs", bw->read);
	json_num(j, "write_gbs", bw->write);
	json_num(j, "copy_gbs", bw->copy);
	json_num(j, "read_all_gbs", bw->read_all);
	json_num(j, "write_all_gbs", bw->write_all);
	json_num(j, "copy_all_gbs", bw->copy_all);
	tc_json_obj_end(j);
}

static void json_words(struct tc_json *j, const char *key, char *const *v, size_t n)
{
	tc_json_arr_begin(j, key);
	for (size_t i = 0; i < n; i++)
		tc_json_str(j, NULL, v[i]);
	tc_json_arr_end(j);
}

static int write_json(FILE *f, const struct tacho_cache_result *r, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	const struct tacho_cache_about *a = &r->about;
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_int(&j, "cpu", a->cpu);
	tc_json_str(&j, "brand", a->brand);
	tc_json_bool(&j, "hypervisor", a->hypervisor);
	tc_json_arr_begin(&j, "levels");
	for (size_t i = 0; i < r->nlevels; i++) {
		const struct tacho_cache_level *lv = &r->levels[i];

		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "level", lv->level);
		tc_json_str(&j, "type", tacho_cache_type_name(lv->type));
		json_kib(&j, "measured_kib", lv->bytes);
		json_size(&j, "measured_bytes", lv->bytes);
		json_size(&j, "first_bytes", lv->first_bytes);
		json_num(&j, "latency_ns", lv->ns);
		json_num(&j, "latency_ns_min", lv->ns_min);
		json_num(&j, "latency_ns_max", lv->ns_max);
		json_num(&j, "latency_ticks", lv->ticks);
		json_num(&j, "latency_cycles", lv->cycles);
		json_kib(&j, "cpuid_kib", lv->cpuid_bytes);
		json_kib(&j, "sysfs_kib", lv->sysfs_bytes);
		if (lv->sysfs_shared)
			tc_json_uint(&j, "sysfs_shared", lv->sysfs_shared);
		else
			tc_json_null(&j, "sysfs_shared");
		json_agrees(&j, lv->agrees);
		tc_json_str(&j, "note", lv->note[0] ? lv->note : NULL);
		json_bw(&j, &lv->bw);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	json_num(&j, "dram_latency_ns", r->mem.seen ? r->mem.ns : NAN);
	tc_json_obj_begin(&j, "memory");
	tc_json_bool(&j, "seen", r->mem.seen);
	tc_json_bool(&j, "flat", r->mem.flat);
	json_size(&j, "first_bytes", r->mem.first_bytes);
	json_num(&j, "latency_ns", r->mem.ns);
	json_num(&j, "latency_ns_min", r->mem.ns_min);
	json_num(&j, "latency_ns_max", r->mem.ns_max);
	json_num(&j, "latency_ticks", r->mem.ticks);
	json_num(&j, "latency_cycles", r->mem.cycles);
	json_bw(&j, &r->mem.bw);
	tc_json_obj_end(&j);
	tc_json_arr_begin(&j, "tlbs");
	for (size_t i = 0; i < r->ntlbs; i++) {
		const struct tacho_cache_tlb *t = &r->tlbs[i];

		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "level", t->level);
		tc_json_uint(&j, "entries", t->entries);
		tc_json_uint(&j, "reach_bytes", t->reach_bytes);
		json_num(&j, "latency_ns", t->ns);
		json_num(&j, "miss_ns", t->miss_ns);
		if (t->cpuid_entries)
			tc_json_uint(&j, "cpuid_entries", t->cpuid_entries);
		else
			tc_json_null(&j, "cpuid_entries");
		json_agrees(&j, t->agrees);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_begin(&j, "curves");
	for (unsigned c = 0; c < TACHO_CACHE_CURVE_COUNT; c++) {
		tc_json_arr_begin(&j, curve_names[c]);
		for (size_t i = 0; i < r->ncurve[c]; i++) {
			const struct tacho_cache_point *p = &r->curve[c][i];

			tc_json_obj_begin(&j, NULL);
			tc_json_uint(&j, "bytes", p->bytes);
			if (p->pages)
				tc_json_uint(&j, "pages", p->pages);
			else
				tc_json_null(&j, "pages");
			json_num(&j, "ns", p->ns);
			json_num(&j, "ns_p25", p->ns_p25);
			json_num(&j, "ns_p75", p->ns_p75);
			json_num(&j, "ns_min", p->ns_min);
			json_num(&j, "ns_max", p->ns_max);
			tc_json_uint(&j, "samples", p->samples);
			tc_json_uint(&j, "discarded", p->discarded);
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
	}
	tc_json_obj_end(&j);
	tc_json_obj_begin(&j, "measurement");
	json_num(&j, "tsc_hz", a->tsc_hz);
	tc_json_str(&j, "tsc_source", a->tsc_source);
	json_num(&j, "core_hz", a->core_hz > 0 ? a->core_hz : NAN);
	json_num(&j, "core_hz_min", a->core_hz_min > 0 ? a->core_hz_min : NAN);
	json_num(&j, "core_hz_max", a->core_hz_max > 0 ? a->core_hz_max : NAN);
	tc_json_uint(&j, "points_per_octave", a->points_per_octave);
	json_num(&j, "step", a->step);
	tc_json_uint(&j, "samples", a->samples);
	tc_json_uint(&j, "rounds", a->rounds);
	tc_json_uint(&j, "min_bytes", a->min_bytes);
	tc_json_uint(&j, "max_bytes", a->max_bytes);
	tc_json_bool(&j, "huge_pages", a->huge_pages);
	json_num(&j, "huge_fraction", a->huge_fraction);
	tc_json_str(&j, "kernel", a->kernel);
	tc_json_uint(&j, "threads", a->threads);
	json_num(&j, "seconds", a->seconds);
	json_num(&j, "steal_pct", a->steal_pct);
	tc_json_uint(&j, "discarded", a->discarded);
	tc_json_uint(&j, "busy", a->busy);
	tc_json_bool(&j, "thorough", a->thorough);
	tc_json_obj_end(&j);
	json_words(&j, "warnings", r->warnings, r->nwarnings);
	json_words(&j, "notes", r->notes, r->nnotes);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* --- CSV: points, levels, memory, TLBs and words in one table, told apart by the
 * first column, as stat's events and metrics are --- */

enum { C_KIND, C_CURVE, C_LEVEL, C_TYPE, C_BYTES, C_PAGES, C_NS, C_P25, C_P75, C_MIN, C_MAX,
       C_SAMPLES, C_DISCARDED, C_TICKS, C_CYCLES, C_CPUID, C_SYSFS, C_AGREES, C_READ, C_WRITE,
       C_COPY, C_READ_ALL, C_WRITE_ALL, C_COPY_ALL, C_ENTRIES, C_CPUID_ENTRIES, C_TEXT, C_COUNT };

static const char *const csv_head[C_COUNT] = {
	"kind", "curve", "level", "type", "bytes", "pages", "ns", "ns_p25", "ns_p75", "ns_min",
	"ns_max", "samples", "discarded", "ticks", "cycles", "cpuid_bytes", "sysfs_bytes",
	"agrees", "read_gbs", "write_gbs", "copy_gbs", "read_all_gbs", "write_all_gbs",
	"copy_all_gbs", "entries", "cpuid_entries", "text",
};

struct csv_row {
	char cell[C_COUNT][48];
	const char *text;
};

static void cell_d(struct csv_row *row, unsigned c, double v)
{
	if (isfinite(v))
		snprintf(row->cell[c], sizeof(row->cell[c]), "%.17g", v);
}

static void cell_u(struct csv_row *row, unsigned c, uint64_t v)
{
	snprintf(row->cell[c], sizeof(row->cell[c]), "%" PRIu64, v);
}

static void cell_s(struct csv_row *row, unsigned c, const char *s)
{
	snprintf(row->cell[c], sizeof(row->cell[c]), "%s", s ? s : "");
}

static void csv_emit(FILE *f, const struct tc_write_settings *w, const struct csv_row *row)
{
	const char *fields[C_COUNT];

	for (unsigned c = 0; c < C_COUNT; c++)
		fields[c] = row->cell[c];
	fields[C_TEXT] = row->text ? row->text : "";
	tc_csv_row(f, w, fields, C_COUNT);
}

static void csv_bw(struct csv_row *row, const struct tacho_cache_bandwidth *bw)
{
	if (!bw->bytes)
		return;
	cell_d(row, C_READ, bw->read);
	cell_d(row, C_WRITE, bw->write);
	cell_d(row, C_COPY, bw->copy);
	cell_d(row, C_READ_ALL, bw->read_all);
	cell_d(row, C_WRITE_ALL, bw->write_all);
	cell_d(row, C_COPY_ALL, bw->copy_all);
}

static void write_csv(FILE *f, const struct tacho_cache_result *r, const struct tc_write_settings *w)
{
	struct csv_row row;

	if (w->header)
		tc_csv_row(f, w, csv_head, C_COUNT);
	for (unsigned c = 0; c < TACHO_CACHE_CURVE_COUNT; c++) {
		for (size_t i = 0; i < r->ncurve[c]; i++) {
			const struct tacho_cache_point *p = &r->curve[c][i];

			memset(&row, 0, sizeof(row));
			cell_s(&row, C_KIND, "point");
			cell_s(&row, C_CURVE, curve_names[c]);
			cell_u(&row, C_BYTES, p->bytes);
			if (p->pages)
				cell_u(&row, C_PAGES, p->pages);
			cell_d(&row, C_NS, p->ns);
			cell_d(&row, C_P25, p->ns_p25);
			cell_d(&row, C_P75, p->ns_p75);
			cell_d(&row, C_MIN, p->ns_min);
			cell_d(&row, C_MAX, p->ns_max);
			cell_u(&row, C_SAMPLES, p->samples);
			cell_u(&row, C_DISCARDED, p->discarded);
			csv_emit(f, w, &row);
		}
	}
	for (size_t i = 0; i < r->nlevels; i++) {
		const struct tacho_cache_level *lv = &r->levels[i];

		memset(&row, 0, sizeof(row));
		cell_s(&row, C_KIND, "level");
		cell_u(&row, C_LEVEL, lv->level);
		cell_s(&row, C_TYPE, tacho_cache_type_name(lv->type));
		if (lv->bytes) {
			cell_u(&row, C_BYTES, lv->bytes);
			cell_d(&row, C_NS, lv->ns);
			cell_d(&row, C_MIN, lv->ns_min);
			cell_d(&row, C_MAX, lv->ns_max);
			cell_d(&row, C_TICKS, lv->ticks);
			cell_d(&row, C_CYCLES, lv->cycles);
		}
		if (lv->cpuid_bytes)
			cell_u(&row, C_CPUID, lv->cpuid_bytes);
		if (lv->sysfs_bytes)
			cell_u(&row, C_SYSFS, lv->sysfs_bytes);
		if (lv->agrees >= 0)
			cell_s(&row, C_AGREES, lv->agrees ? "true" : "false");
		csv_bw(&row, &lv->bw);
		row.text = lv->note;
		csv_emit(f, w, &row);
	}
	if (r->mem.seen) {
		memset(&row, 0, sizeof(row));
		cell_s(&row, C_KIND, "memory");
		cell_u(&row, C_BYTES, r->mem.first_bytes);
		cell_d(&row, C_NS, r->mem.ns);
		cell_d(&row, C_MIN, r->mem.ns_min);
		cell_d(&row, C_MAX, r->mem.ns_max);
		cell_d(&row, C_TICKS, r->mem.ticks);
		cell_d(&row, C_CYCLES, r->mem.cycles);
		csv_bw(&row, &r->mem.bw);
		row.text = r->mem.flat ? "" : "still rising at the largest size: a lower bound";
		csv_emit(f, w, &row);
	}
	for (size_t i = 0; i < r->ntlbs; i++) {
		const struct tacho_cache_tlb *t = &r->tlbs[i];

		memset(&row, 0, sizeof(row));
		cell_s(&row, C_KIND, "tlb");
		cell_u(&row, C_LEVEL, t->level);
		cell_u(&row, C_BYTES, t->reach_bytes);
		cell_d(&row, C_NS, t->ns);
		cell_u(&row, C_ENTRIES, t->entries);
		if (t->cpuid_entries)
			cell_u(&row, C_CPUID_ENTRIES, t->cpuid_entries);
		if (t->agrees >= 0)
			cell_s(&row, C_AGREES, t->agrees ? "true" : "false");
		csv_emit(f, w, &row);
	}
	for (size_t i = 0; i < r->nwarnings + r->nnotes; i++) {
		memset(&row, 0, sizeof(row));
		cell_s(&row, C_KIND, i < r->nwarnings ? "warning" : "note");
		row.text = i < r->nwarnings ? r->warnings[i] : r->notes[i - r->nwarnings];
		csv_emit(f, w, &row);
	}
}

int tacho_cache_write(const struct tacho_cache_result *r, FILE *f, enum tacho_format fmt,
		      const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!r || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_TABLE:
		err = write_table(f, r);
		break;
	case TACHO_FORMAT_CSV:
		write_csv(f, r, &w);
		break;
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		err = write_json(f, r, fmt, &w);
		break;
	default:
		return -EINVAL;
	}
	if (err)
		return err;
	return tc_write_status(f);
}

/* --- SVG --- */

#define SVG_W 880
#define SVG_H 520
#define PLOT_L 70
#define PLOT_R 200     /* room for the labels of the levels on the right */
#define PLOT_T 58
#define PLOT_B 60

struct plot {
	double x0, x1;    /* log2 of the sizes at the edges */
	double y0, y1;    /* log10 of the latencies at the edges */
};

static double px(const struct plot *p, double bytes)
{
	return PLOT_L + (log2(bytes) - p->x0) / (p->x1 - p->x0) * (SVG_W - PLOT_L - PLOT_R);
}

static double py(const struct plot *p, double ns)
{
	return SVG_H - PLOT_B - (log10(ns) - p->y0) / (p->y1 - p->y0) * (SVG_H - PLOT_T - PLOT_B);
}

static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if ((unsigned char)*s >= 0x20 || *s == '\t')
			fputc(*s, f);
	}
}

/* "4K", "1M", "256M" */
static void short_size(double bytes, char *buf, size_t size)
{
	static const char *const u[] = { "", "K", "M", "G" };
	unsigned i = 0;

	while (bytes >= 1024 && i + 1 < ARRAY_SIZE(u)) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, size, "%g%s", bytes, u[i]);
}

static void svg_axes(FILE *f, const struct plot *p)
{
	double left = PLOT_L, right = SVG_W - PLOT_R, top = PLOT_T, bottom = SVG_H - PLOT_B;
	static const double mant[] = { 1, 2, 5 };

	fprintf(f, "<rect class=\"frame\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>\n",
		left, top, right - left, bottom - top);
	for (int e = (int)floor(p->x0); e <= (int)ceil(p->x1); e++) {
		double x;
		char lab[16];

		if (e < p->x0 - 1e-9 || e > p->x1 + 1e-9)
			continue;
		x = px(p, exp2(e));
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\"/>\n", x,
			top, x, bottom);
		/* a label every octave while they fit, else every other one */
		if ((p->x1 - p->x0) > 16 && e % 2)
			continue;
		short_size(exp2(e), lab, sizeof(lab));
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n",
			x, bottom + 16, lab);
	}
	for (int e = (int)floor(p->y0); e <= (int)ceil(p->y1); e++) {
		for (unsigned m = 0; m < ARRAY_SIZE(mant); m++) {
			double ns = mant[m] * pow(10, e), y;

			if (log10(ns) < p->y0 - 1e-9 || log10(ns) > p->y1 + 1e-9)
				continue;
			y = py(p, ns);
			fprintf(f, "<line class=\"grid\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>\n",
				left, y, right, y);
			fprintf(f, "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
				left - 6, y + 4, ns);
		}
	}
	fprintf(f, "<text class=\"axis\" x=\"%g\" y=\"%g\" text-anchor=\"middle\">working set "
		"(bytes, log scale)</text>\n", (left + right) / 2, bottom + 40);
	fprintf(f, "<text class=\"axis\" transform=\"translate(18 %g) rotate(-90)\" "
		"text-anchor=\"middle\">latency of one load (ns, log scale)</text>\n",
		(top + bottom) / 2);
}

static void svg_curve(FILE *f, const struct plot *p, const struct tacho_cache_result *r,
		      enum tacho_cache_curve c, const char *cls, bool bars)
{
	if (!r->ncurve[c])
		return;
	if (bars) {
		for (size_t i = 0; i < r->ncurve[c]; i++) {
			const struct tacho_cache_point *q = &r->curve[c][i];

			if (!(q->ns_p25 > 0) || !(q->ns_p75 > 0))
				continue;
			fprintf(f, "<line class=\"spread\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\"/>\n", px(p, (double)q->bytes), py(p, q->ns_p25),
				px(p, (double)q->bytes), py(p, q->ns_p75));
		}
	}
	fprintf(f, "<polyline class=\"%s\" points=\"", cls);
	for (size_t i = 0; i < r->ncurve[c]; i++) {
		const struct tacho_cache_point *q = &r->curve[c][i];

		if (q->ns > 0)
			fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(p, (double)q->bytes), py(p, q->ns));
	}
	fprintf(f, "\"/>\n");
	for (size_t i = 0; bars && i < r->ncurve[c]; i++) {
		const struct tacho_cache_point *q = &r->curve[c][i];

		if (q->ns > 0)
			fprintf(f, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>\n",
				px(p, (double)q->bytes), py(p, q->ns));
	}
}

/* A vertical marker of a size, labelled at the top (claims) or in the plot (levels). */
static void svg_claim(FILE *f, const struct plot *p, uint64_t bytes, const char *cls,
		      const char *label, int row)
{
	double x;

	if (!bytes || log2((double)bytes) < p->x0 - 1e-9 || log2((double)bytes) > p->x1 + 1e-9)
		return;
	x = px(p, (double)bytes);
	fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", cls, x,
		PLOT_T, x, SVG_H - PLOT_B);
	fprintf(f, "<text class=\"%s-label\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", cls, x,
		PLOT_T - 6 - 12 * row);
	svg_text(f, label);
	fprintf(f, "</text>\n");
}

int tacho_cache_write_svg(const struct tacho_cache_result *r, FILE *f,
			  const struct tacho_write_opts *opts)
{
	const struct tacho_cache_point *c;
	size_t n;
	struct plot p;
	double lo = INFINITY, hi = 0;
	struct tc_write_settings w;
	char title[160];
	int err;

	if (!r || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, TACHO_FORMAT_TABLE, &w);
	if (err)
		return err;
	c = r->curve[TACHO_CACHE_CURVE_LATENCY];
	n = r->ncurve[TACHO_CACHE_CURVE_LATENCY];
	if (!n)
		return -EINVAL;
	for (unsigned k = 0; k <= TACHO_CACHE_CURVE_RANDOM; k++) {
		for (size_t i = 0; i < r->ncurve[k]; i++) {
			const struct tacho_cache_point *q = &r->curve[k][i];
			double a = q->ns_p25 > 0 ? q->ns_p25 : q->ns, b = q->ns_p75 > q->ns ? q->ns_p75 : q->ns;

			if (a > 0 && a < lo)
				lo = a;
			if (b > hi)
				hi = b;
		}
	}
	if (!(lo > 0) || !(hi >= lo))
		return -EINVAL;
	p.x0 = log2((double)c[0].bytes);
	p.x1 = log2((double)c[n - 1].bytes);
	for (size_t i = 0; i < r->nlevels; i++) {
		/* claims beyond the sweep still get a marker */
		uint64_t b[2] = { r->levels[i].cpuid_bytes, r->levels[i].sysfs_bytes };
		for (unsigned k = 0; k < 2; k++)
			if (b[k] && log2((double)b[k]) > p.x1)
				p.x1 = log2((double)b[k]);
	}
	if (p.x1 <= p.x0)
		p.x1 = p.x0 + 1;
	p.y0 = floor(log10(lo) * 4) / 4;
	p.y1 = ceil(log10(hi) * 4) / 4;
	if (p.y1 <= p.y0)
		p.y1 = p.y0 + 0.25;

	snprintf(title, sizeof(title), "Load latency against working set, CPU %d%s%s",
		 r->about.cpu, r->about.brand[0] ? ", " : "", r->about.brand);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n<title>", SVG_W, SVG_H, SVG_W, SVG_H);
	svg_text(f, title);
	fprintf(f, "</title>\n<style>\n"
		"text { font-family: sans-serif; font-size: 11px; fill: #222; }\n"
		".title { font-size: 14px; font-weight: bold; }\n"
		".frame { fill: none; stroke: #444; }\n"
		".grid { stroke: #ddd; stroke-width: 0.5; }\n"
		".curve { fill: none; stroke: #1f5fbf; stroke-width: 1.8; }\n"
		".curve-random { fill: none; stroke: #999; stroke-width: 1.2; stroke-dasharray: 4 2; }\n"
		".point { fill: #1f5fbf; }\n"
		".spread { stroke: #1f5fbf; stroke-opacity: 0.45; stroke-width: 3; }\n"
		".level { stroke: #2a9d3a; stroke-width: 1.2; }\n"
		".plateau { stroke: #2a9d3a; stroke-width: 3; stroke-opacity: 0.6; }\n"
		".level-label { fill: #2a7d2a; }\n"
		".claim-cpuid { stroke: #c0392b; stroke-width: 1; stroke-dasharray: 6 3; }\n"
		".claim-cpuid-label { fill: #c0392b; font-size: 10px; }\n"
		".claim-sysfs { stroke: #d68910; stroke-width: 1; stroke-dasharray: 2 3; }\n"
		".claim-sysfs-label { fill: #b9770e; font-size: 10px; }\n"
		".memory { stroke: #7d3c98; stroke-width: 1.2; stroke-dasharray: 8 3; }\n"
		".memory-label { fill: #7d3c98; }\n"
		"</style>\n");
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"18\">", PLOT_L);
	svg_text(f, title);
	fprintf(f, "</text>\n");
	svg_axes(f, &p);
	svg_curve(f, &p, r, TACHO_CACHE_CURVE_RANDOM, "curve-random", false);
	svg_curve(f, &p, r, TACHO_CACHE_CURVE_LATENCY, "curve", true);

	for (size_t i = 0; i < r->nlevels; i++) {
		const struct tacho_cache_level *lv = &r->levels[i];
		char name[16], lab[96], sz[32];
		double x, y;

		level_name(lv, name, sizeof(name));
		if (lv->cpuid_bytes) {
			tc_cache_fmt_bytes(lv->cpuid_bytes, sz, sizeof(sz));
			snprintf(lab, sizeof(lab), "CPUID %s %s", name, sz);
			svg_claim(f, &p, lv->cpuid_bytes, "claim-cpuid", lab, (int)(i % 2));
		}
		if (lv->sysfs_bytes && lv->sysfs_bytes != lv->cpuid_bytes) {
			tc_cache_fmt_bytes(lv->sysfs_bytes, sz, sizeof(sz));
			snprintf(lab, sizeof(lab), "sysfs %s %s", name, sz);
			svg_claim(f, &p, lv->sysfs_bytes, "claim-sysfs", lab, (int)(i % 2));
		}
		if (!lv->bytes)
			continue;
		x = px(&p, (double)lv->bytes);
		y = py(&p, lv->ns);
		fprintf(f, "<line class=\"plateau\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			px(&p, (double)lv->first_bytes), y, x, y);
		fprintf(f, "<line class=\"level\" data-level=\"%u\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%d\"/>\n", lv->level, x, y, x, SVG_H - PLOT_B);
		tc_cache_fmt_bytes(lv->bytes, sz, sizeof(sz));
		snprintf(lab, sizeof(lab), "%s %s, %.3g ns%s", name, sz, lv->ns,
			 lv->agrees == 0 ? " (disagrees)" : "");
		fprintf(f, "<text class=\"level-label\" x=\"%.1f\" y=\"%.1f\">", x + 4, y - 6);
		svg_text(f, lab);
		fprintf(f, "</text>\n");
	}
	if (r->mem.seen && r->mem.ns > 0) {
		double y = py(&p, r->mem.ns);
		char lab[64];

		fprintf(f, "<line class=\"memory\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
			px(&p, (double)r->mem.first_bytes), y, SVG_W - PLOT_R, y);
		snprintf(lab, sizeof(lab), "memory %s%.3g ns", r->mem.flat ? "" : ">= ", r->mem.ns);
		fprintf(f, "<text class=\"memory-label\" x=\"%d\" y=\"%.1f\">", SVG_W - PLOT_R + 6, y + 4);
		svg_text(f, lab);
		fprintf(f, "</text>\n");
	}
	/* the legend (its lines are "key"s, not marks of the curve) */
	fprintf(f, "<g class=\"legend\" transform=\"translate(%d %d)\">\n"
		"<line class=\"curve key\" x1=\"0\" y1=\"0\" x2=\"20\" y2=\"0\"/><text x=\"26\" y=\"4\">median, "
		"quartiles as bars</text>\n"
		"<line class=\"level key\" x1=\"0\" y1=\"16\" x2=\"20\" y2=\"16\"/><text x=\"26\" y=\"20\">a "
		"level: its size and latency</text>\n"
		"<line class=\"claim-cpuid key\" x1=\"0\" y1=\"32\" x2=\"20\" y2=\"32\"/><text x=\"26\" "
		"y=\"36\">CPUID's size</text>\n"
		"<line class=\"claim-sysfs key\" x1=\"0\" y1=\"48\" x2=\"20\" y2=\"48\"/><text x=\"26\" "
		"y=\"52\">sysfs's, where it differs</text>\n", SVG_W - PLOT_R + 6, SVG_H - PLOT_B - 70);
	if (r->ncurve[TACHO_CACHE_CURVE_RANDOM])
		fprintf(f, "<line class=\"curve-random key\" x1=\"0\" y1=\"64\" x2=\"20\" y2=\"64\"/>"
			"<text x=\"26\" y=\"68\">random, small pages</text>\n");
	fprintf(f, "</g>\n</svg>\n");
	return tc_write_status(f);
}
