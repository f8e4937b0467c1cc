/* msr-write.c - the writers of the MSR part: sets of values (what `tacho msr read`,
 * `decode`, `write`, `restore` and `list -v EVENT` print), the table of registers
 * (`tacho msr list`) and the derived readings (`tacho msr freq`, `power`), each as a
 * table, CSV or the JSON document of docs/schemas.md. */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "msr/msr.h"
#include "output/output.h"

/* why, with the hint's words in parentheses when the caller gave some. */
static void why_text(const struct tc_write_settings *w, const char *why, enum tacho_hint hint,
		     char *buf, size_t size)
{
	const char *words = tc_hint_words(w, hint);

	snprintf(buf, size, "%s%s%s%s", why ? why : "", words ? " (" : "", words ? words : "",
		 words ? ")" : "");
}

static const char *entry_name(const struct tc_msr_entry *e)
{
	return e->msr ? e->msr->name : NULL;
}

/* Bits of v the manual reserves, and bits no field describes that it does not. */
static uint64_t reserved_bits(const struct tacho_msr *m, uint64_t v)
{
	return m && m->rest_reserved ? v & ~tc_msr_fields_mask(m) : 0;
}

static uint64_t undecoded_bits(const struct tacho_msr *m, uint64_t v)
{
	return m && !m->rest_reserved ? v & ~tc_msr_fields_mask(m) : 0;
}

/* --- sets: the table --- */

static bool any_write(const struct tacho_msr_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].wrote)
			return true;
	return false;
}

static bool any_label(const struct tacho_msr_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].label)
			return true;
	return false;
}

static bool any_cpu(const struct tacho_msr_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].cpu >= 0)
			return true;
	return false;
}

static void fmt_value(uint64_t v, char *buf, size_t size)
{
	snprintf(buf, size, "0x%016llx", (unsigned long long)v);
}

static void fmt_register(const struct tc_msr_entry *e, char *buf, size_t size)
{
	if (e->msr)
		snprintf(buf, size, "%s", e->msr->name);
	else if (e->err && !e->address)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "MSR 0x%x", e->address);
}

/* The fields of one value, indented under it. */
static int write_fields_table(FILE *f, const struct tc_msr_entry *e)
{
	const struct tacho_msr *m = e->msr;
	struct tc_table *t;
	uint64_t rsv = reserved_bits(m, e->value), und = undecoded_bits(m, e->value);
	int err = 0;

	if (!m || !e->has_value)
		return 0;
	t = tc_table_new(4);
	if (!t)
		return -ENOMEM;
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 2, true);
	for (unsigned i = 0; i < m->nfields && !err; i++) {
		const struct tc_msr_field *fl = &m->fields[i];
		uint64_t x = tc_msr_field_get(fl, e->value);
		char bits[16], val[32], meaning[200];

		tc_msr_bits(fl->lo, fl->hi, bits, sizeof(bits));
		if (fl->lo == fl->hi)
			snprintf(val, sizeof(val), "%llu", (unsigned long long)x);
		else
			snprintf(val, sizeof(val), "0x%llx", (unsigned long long)x);
		tc_msr_meaning(fl, e->value, meaning, sizeof(meaning));
		/* a hex code means itself: the table says it once */
		if (!strcmp(meaning, val))
			meaning[0] = '\0';
		err = tc_table_add(t, (const char *const[]){ fl->name, bits, val, meaning });
	}
	if (!err)
		tc_table_print(t, f, 4, 2);
	tc_table_free(t);
	if (rsv)
		fprintf(f, "    reserved bits set: 0x%llx (the manual reserves them)\n",
			(unsigned long long)rsv);
	if (und)
		fprintf(f, "    other bits set: 0x%llx (model-specific: no field of tacho's "
			"describes them)\n", (unsigned long long)und);
	return err;
}

/* A row of the set's table from all its possible cells (event, cpu, register, address,
 * before, written, value, note), leaving out the columns the set does not need. */
static int add_row(struct tc_table *t, bool labels, bool cpus, bool writes,
		   const char *const all[8])
{
	const char *cells[8];
	unsigned nc = 0;

	for (unsigned c = 0; c < 8; c++) {
		if ((c == 0 && !labels) || (c == 1 && !cpus) || ((c == 4 || c == 5) && !writes))
			continue;
		cells[nc++] = all[c];
	}
	while (nc < 8)
		cells[nc++] = "";
	return tc_table_add(t, cells);
}

static int write_set_table(const struct tacho_msr_set *set, FILE *f, const struct tc_write_settings *w)
{
	bool writes = any_write(set), labels = any_label(set), cpus = any_cpu(set);
	bool fields = set->flags & TACHO_MSR_SET_FIELDS;
	struct tc_table *t;
	char why[1024];
	int err = 0;

	if (fields) {
		/* a block per value: its line, then its fields */
		for (size_t i = 0; i < set->n && !err; i++) {
			const struct tc_msr_entry *e = &set->v[i];
			char reg[64], v[24], b[24], wr[24];

			if (i)
				fputc('\n', f);
			fmt_register(e, reg, sizeof(reg));
			if (e->label)
				fprintf(f, "%s: ", e->label);
			if (e->cpu >= 0)
				fprintf(f, "CPU %d ", e->cpu);
			if (e->msr)
				fprintf(f, "%s (0x%x)", reg, e->address);
			else if (e->address)
				fputs(reg, f);
			why_text(w, e->why, e->hint, why, sizeof(why));
			fmt_value(e->value, v, sizeof(v));
			fmt_value(e->before, b, sizeof(b));
			fmt_value(e->written_value, wr, sizeof(wr));
			if (!e->has_value) {
				if (e->wrote && e->written)
					fprintf(f, ": wrote %s (was %s), but reading it back failed: %s\n",
						wr, b, why);
				else
					fprintf(f, "%s%s\n", e->msr || e->address ? ": " : "", why);
				continue;
			}
			if (!e->wrote)
				fprintf(f, " = %s\n", v);
			else if (!e->written)
				fprintf(f, " = %s; not written (%s): %s\n", v, wr, why);
			else
				fprintf(f, " = %s, was %s, wrote %s\n", v, b, wr);
			err = write_fields_table(f, e);
		}
		return err;
	}
	t = tc_table_new(8);
	if (!t)
		return -ENOMEM;
	err = add_row(t, labels, cpus, writes, (const char *const[]){ "event", "cpu", "register",
		      "address", "before", "written", writes ? "now" : "value", "" });
	for (size_t i = 0; i < set->n && !err; i++) {
		const struct tc_msr_entry *e = &set->v[i];
		char cpu[16], reg[64], addr[16], v[24], b[24], wr[24], note[1100];

		snprintf(cpu, sizeof(cpu), "%d", e->cpu);
		fmt_register(e, reg, sizeof(reg));
		snprintf(addr, sizeof(addr), e->msr || e->address ? "0x%x" : "-", e->address);
		fmt_value(e->value, v, sizeof(v));
		fmt_value(e->before, b, sizeof(b));
		fmt_value(e->written_value, wr, sizeof(wr));
		note[0] = '\0';
		if (e->err) {
			why_text(w, e->why, e->hint, why, sizeof(why));
			snprintf(note, sizeof(note), "%s%s", e->wrote ? "not written: " : "", why);
		} else if (e->wrote && e->value != e->written_value) {
			snprintf(note, sizeof(note), "reads back other than written (bits the "
				 "CPU fixes, or a counter that moved)");
		}
		err = add_row(t, labels, cpus, writes, (const char *const[]){
				      e->label ? e->label : "", e->cpu >= 0 ? cpu : "-", reg, addr,
				      e->wrote ? b : "-", e->wrote ? wr : "-",
				      e->has_value ? v : "-", note });
	}
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	return err;
}

/* --- sets: JSON and CSV --- */

static void json_fields(struct tc_json *j, const struct tc_msr_entry *e)
{
	const struct tacho_msr *m = e->msr;

	tc_json_arr_begin(j, "fields");
	for (unsigned i = 0; m && e->has_value && i < m->nfields; i++) {
		const struct tc_msr_field *fl = &m->fields[i];
		char meaning[200];

		tc_msr_meaning(fl, e->value, meaning, sizeof(meaning));
		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "name", fl->name);
		tc_json_uint(j, "lo", fl->lo);
		tc_json_uint(j, "hi", fl->hi);
		tc_json_uint(j, "value", tc_msr_field_get(fl, e->value));
		tc_json_str(j, "meaning", meaning);
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
}

static int write_set_json(const struct tacho_msr_set *set, FILE *f, enum tacho_format fmt,
			  const struct tc_write_settings *w)
{
	struct tc_json j;
	char why[1024], hex[24];

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_arr_begin(&j, "msrs");
	for (size_t i = 0; i < set->n; i++) {
		const struct tc_msr_entry *e = &set->v[i];

		tc_json_obj_begin(&j, NULL);
		if (e->cpu >= 0)
			tc_json_int(&j, "cpu", e->cpu);
		else
			tc_json_null(&j, "cpu");
		tc_json_str(&j, "label", e->label);
		tc_json_str(&j, "name", entry_name(e));
		if (e->msr || e->address)
			tc_json_uint(&j, "address", e->address);
		else
			tc_json_null(&j, "address");
		fmt_value(e->value, hex, sizeof(hex));
		if (e->has_value) {
			tc_json_uint(&j, "value", e->value);
			tc_json_str(&j, "hex", hex);
			tc_json_uint(&j, "reserved", reserved_bits(e->msr, e->value));
			tc_json_uint(&j, "undecoded", undecoded_bits(e->msr, e->value));
		} else {
			tc_json_null(&j, "value");
			tc_json_null(&j, "hex");
			tc_json_null(&j, "reserved");
			tc_json_null(&j, "undecoded");
		}
		if (e->wrote) {
			tc_json_uint(&j, "before", e->before);
			tc_json_uint(&j, "written", e->written_value);
			tc_json_bool(&j, "write_made", e->written);
		}
		json_fields(&j, e);
		if (e->err) {
			why_text(w, e->why, e->hint, why, sizeof(why));
			tc_json_str(&j, "error", why);
		} else {
			tc_json_null(&j, "error");
		}
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

static void write_set_csv(const struct tacho_msr_set *set, FILE *f, const struct tc_write_settings *w)
{
	static const char *const head[] = { "kind", "label", "cpu", "name", "address", "value",
					    "before", "written", "field", "bits", "field_value",
					    "meaning", "error" };
	char why[1024];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < set->n; i++) {
		const struct tc_msr_entry *e = &set->v[i];
		char cpu[16] = "", addr[16] = "", v[24] = "", b[24] = "", wr[24] = "";
		const struct tacho_msr *m = e->msr;

		if (e->cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%d", e->cpu);
		if (e->msr || e->address)
			snprintf(addr, sizeof(addr), "0x%x", e->address);
		if (e->has_value)
			fmt_value(e->value, v, sizeof(v));
		if (e->wrote) {
			fmt_value(e->before, b, sizeof(b));
			fmt_value(e->written_value, wr, sizeof(wr));
		}
		why[0] = '\0';
		if (e->err)
			why_text(w, e->why, e->hint, why, sizeof(why));
		{
			const char *row[] = { "msr", e->label ? e->label : "", cpu,
					      m ? m->name : "", addr, v, b, wr, "", "", "", "", why };
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
			tc_csv_row(f, w, row, ARRAY_SIZE(row));
		}
		if (!(set->flags & TACHO_MSR_SET_FIELDS) || !m || !e->has_value)
			continue;
		for (unsigned k = 0; k < m->nfields; k++) {
			const struct tc_msr_field *fl = &m->fields[k];
			char bits[16], fv[24], meaning[200];

			tc_msr_bits(fl->lo, fl->hi, bits, sizeof(bits));
			snprintf(fv, sizeof(fv), "%llu",
				 (unsigned long long)tc_msr_field_get(fl, e->value));
			tc_msr_meaning(fl, e->value, meaning, sizeof(meaning));
			{
				const char *row[] = { "field", e->label ? e->label : "", cpu, m->name,
						      addr, v, b, wr, fl->name, bits, fv, meaning, "" };
				_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
				tc_csv_row(f, w, row, ARRAY_SIZE(row));
			}
		}
	}
}

int tacho_msr_set_write(const struct tacho_msr_set *set, FILE *f, enum tacho_format fmt,
			const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!set || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_set_json(set, f, fmt, &w);
	case TACHO_FORMAT_CSV:
		write_set_csv(set, f, &w);
		break;
	default:
		err = write_set_table(set, f, &w);
		break;
	}
	return err ? err : tc_write_status(f);
}

/* --- the table of registers --- */

static bool matches(const struct tacho_msr *m, const char *pattern)
{
	bool glob;
	const char *a = m->aliases;

	if (!pattern || !*pattern)
		return true;
	glob = strpbrk(pattern, "*?[") != NULL;
	if (glob ? !fnmatch(pattern, m->name, FNM_CASEFOLD) : strcasestr(m->name, pattern) != NULL)
		return true;
	while (a && *a) {
		char word[64];
		size_t n = strcspn(a, ",");
		snprintf(word, sizeof(word), "%.*s", (int)n, a);
		if (glob ? !fnmatch(pattern, word, FNM_CASEFOLD) : strcasestr(word, pattern) != NULL)
			return true;
		a += n;
		a += *a == ',';
	}
	return false;
}

static bool listed(const struct tacho_msr *m, const struct tacho_msr_cpu *cpu,
		   const char *pattern)
{
	return (!cpu || tacho_msr_applies(m, cpu)) && matches(m, pattern);
}

static const char *writes_word(const struct tacho_msr *m)
{
	if (m->writable)
		return m->no_save ? "writes (not saved)" : "writes";
	return m->access == TACHO_MSR_RO ? "-" : "refuses";
}

static int write_list_table(const struct tacho_msr_cpu *cpu, const char *pattern,
			    unsigned flags, FILE *f)
{
	struct tc_table *t = tc_table_new(6);
	int err, count = 0;

	if (!t)
		return -ENOMEM;
	err = tc_table_add(t, (const char *const[]){ "register", "address", "scope", "access",
						     "tacho", "what it is" });
	for (size_t i = 0, n = tacho_msr_count(); i < n && !err; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		char addr[16];

		if (!listed(m, cpu, pattern))
			continue;
		count++;
		snprintf(addr, sizeof(addr), "0x%x", m->address);
		if (flags & TACHO_MSR_LIST_FIELDS) {
			struct tc_table *ft;
			fprintf(f, "%s%s (0x%x), %s, %s; tacho %s\n", count > 1 ? "\n" : "", m->name,
				m->address, tacho_msr_scope_name(m->scope),
				tacho_msr_access_name(m->access), m->writable ? "writes it" :
				m->access == TACHO_MSR_RO ? "reads it" : "does not write it");
			fprintf(f, "  %s\n", m->desc);
			if (m->aliases)
				fprintf(f, "  also named: %s\n", m->aliases);
			fprintf(f, "  exists on: %s\n  from: %s\n", m->cpus, m->source);
			if (!m->writable && m->not_writable)
				fprintf(f, "  not written: %s\n", m->not_writable);
			ft = tc_table_new(3);
			if (!ft) {
				err = -ENOMEM;
				break;
			}
			tc_table_align_right(ft, 0, true);
			for (unsigned k = 0; k < m->nfields && !err; k++) {
				char bits[16];
				tc_msr_bits(m->fields[k].lo, m->fields[k].hi, bits, sizeof(bits));
				err = tc_table_add(ft, (const char *const[]){ bits, m->fields[k].name,
									     m->fields[k].desc });
			}
			if (!err)
				tc_table_print(ft, f, 4, 2);
			tc_table_free(ft);
			if (m->rest_reserved)
				fprintf(f, "    (the other bits are reserved)\n");
			continue;
		}
		err = tc_table_add(t, (const char *const[]){ m->name, addr,
							     tacho_msr_scope_name(m->scope),
							     tacho_msr_access_name(m->access),
							     writes_word(m), m->desc });
	}
	if (!err && !(flags & TACHO_MSR_LIST_FIELDS) && count)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	return err ? err : count;
}

static int write_list_json(const struct tacho_msr_cpu *cpu, const char *pattern, FILE *f,
			   enum tacho_format fmt, const struct tc_write_settings *w)
{
	struct tc_json j;
	int count = 0, err;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_arr_begin(&j, "msrs");
	for (size_t i = 0, n = tacho_msr_count(); i < n; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		const char *a = m->aliases;

		if (!listed(m, cpu, pattern))
			continue;
		count++;
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", m->name);
		tc_json_arr_begin(&j, "aliases");
		while (a && *a) {
			size_t an = strcspn(a, ",");
			tc_json_strn(&j, NULL, a, an);
			a += an;
			a += *a == ',';
		}
		tc_json_arr_end(&j);
		tc_json_uint(&j, "address", m->address);
		tc_json_str(&j, "scope", tacho_msr_scope_name(m->scope));
		tc_json_str(&j, "access", tacho_msr_access_name(m->access));
		tc_json_bool(&j, "writable", m->writable);
		tc_json_str(&j, "not_writable", !m->writable ? m->not_writable : NULL);
		tc_json_bool(&j, "saved", m->writable && !m->no_save);
		tc_json_str(&j, "cpus", m->cpus);
		if (cpu)
			tc_json_bool(&j, "applies", tacho_msr_applies(m, cpu));
		else
			tc_json_null(&j, "applies");
		tc_json_str(&j, "description", m->desc);
		tc_json_str(&j, "source", m->source);
		tc_json_uint(&j, "reserved", m->rest_reserved ? ~tc_msr_fields_mask(m) : 0);
		tc_json_arr_begin(&j, "fields");
		for (unsigned k = 0; k < m->nfields; k++) {
			tc_json_obj_begin(&j, NULL);
			tc_json_str(&j, "name", m->fields[k].name);
			tc_json_uint(&j, "lo", m->fields[k].lo);
			tc_json_uint(&j, "hi", m->fields[k].hi);
			tc_json_str(&j, "description", m->fields[k].desc);
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	err = tc_json_doc_end(&j);
	return err ? err : count;
}

static int write_list_csv(const struct tacho_msr_cpu *cpu, const char *pattern, unsigned flags,
			  FILE *f, const struct tc_write_settings *w)
{
	static const char *const head[] = { "name", "aliases", "address", "scope", "access",
					    "writable", "cpus", "applies", "description", "source",
					    "field", "lo", "hi", "field_description" };
	int count = 0;

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0, n = tacho_msr_count(); i < n; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		char addr[16];
		const char *applies = !cpu ? "" : tacho_msr_applies(m, cpu) ? "yes" : "no";

		if (!listed(m, cpu, pattern))
			continue;
		count++;
		snprintf(addr, sizeof(addr), "0x%x", m->address);
		{
			const char *row[] = { m->name, m->aliases ? m->aliases : "", addr,
					      tacho_msr_scope_name(m->scope),
					      tacho_msr_access_name(m->access),
					      m->writable ? "yes" : "no", m->cpus, applies, m->desc,
					      m->source, "", "", "", "" };
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
			tc_csv_row(f, w, row, ARRAY_SIZE(row));
		}
		if (!(flags & TACHO_MSR_LIST_FIELDS))
			continue;
		for (unsigned k = 0; k < m->nfields; k++) {
			char lo[8], hi[8];
			snprintf(lo, sizeof(lo), "%u", m->fields[k].lo);
			snprintf(hi, sizeof(hi), "%u", m->fields[k].hi);
			{
				const char *row[] = { m->name, m->aliases ? m->aliases : "", addr,
						      tacho_msr_scope_name(m->scope),
						      tacho_msr_access_name(m->access),
						      m->writable ? "yes" : "no", m->cpus, applies,
						      m->desc, m->source, m->fields[k].name, lo, hi,
						      m->fields[k].desc };
				_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
				tc_csv_row(f, w, row, ARRAY_SIZE(row));
			}
		}
	}
	return count;
}

int tacho_msr_list_write(const struct tacho_msr_cpu *cpu, const char *pattern, unsigned flags,
			 FILE *f, enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int n, err;

	if (!f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_list_json(cpu, pattern, f, fmt, &w);
	case TACHO_FORMAT_CSV:
		n = write_list_csv(cpu, pattern, flags, f, &w);
		break;
	default:
		n = write_list_table(cpu, pattern, flags, f);
		break;
	}
	if (n < 0)
		return n;
	err = tc_write_status(f);
	return err ? err : n;
}

/* --- derived readings --- */

static void fmt_num(double v, const char *fmt, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, fmt, v);
}

static int write_rates_table(const struct tacho_msr_rates *r, FILE *f, const struct tc_write_settings *w)
{
	unsigned what = tc_msr_rates_what(r);
	struct tacho_msr_rate x = { .sz = sizeof(x) };
	char why[1024];
	int err = 0;

	if (what & TACHO_MSR_RATE_FREQ) {
		struct tc_table *t = tc_table_new(7);
		if (!t)
			return -ENOMEM;
		for (unsigned c = 1; c < 6; c++)
			tc_table_align_right(t, c, true);
		fprintf(f, "effective frequency over %u ms (APERF/MPERF against the TSC):\n\n",
			tc_msr_rates_interval(r));
		err = tc_table_add(t, (const char *const[]){ "cpu", "seconds", "TSC MHz",
							     "busy MHz", "avg MHz", "C0 %", "" });
		for (size_t i = 0; i < tacho_msr_rates_count(r) && !err; i++) {
			char cpu[16], s[32], tsc[32], busy[32], avg[32], c0[32];
			tacho_msr_rates_get(r, i, &x);
			snprintf(cpu, sizeof(cpu), "%d", x.cpu);
			fmt_num(x.seconds, "%.3f", s, sizeof(s));
			fmt_num(x.tsc_mhz, "%.1f", tsc, sizeof(tsc));
			fmt_num(x.busy_mhz, "%.1f", busy, sizeof(busy));
			fmt_num(x.avg_mhz, "%.1f", avg, sizeof(avg));
			fmt_num(x.c0_pct, "%.1f", c0, sizeof(c0));
			why[0] = '\0';
			if (x.freq_err)
				why_text(w, x.freq_why, TACHO_HINT_NONE, why, sizeof(why));
			err = tc_table_add(t, (const char *const[]){ cpu, s, tsc, busy, avg, c0, why });
		}
		if (!err)
			tc_table_print(t, f, 2, 2);
		tc_table_free(t);
	}
	if (!err && (what & TACHO_MSR_RATE_POWER)) {
		struct tc_table *t = tc_table_new(8);
		if (!t)
			return -ENOMEM;
		for (unsigned c = 1; c < 7; c++)
			tc_table_align_right(t, c, true);
		fprintf(f, "%spower over %u ms (RAPL energy counters):\n\n",
			what & TACHO_MSR_RATE_FREQ ? "\n" : "", tc_msr_rates_interval(r));
		err = tc_table_add(t, (const char *const[]){ "cpu", "seconds", "package W", "pp0 W",
							     "pp1 W", "dram W", "core W", "" });
		for (size_t i = 0; i < tacho_msr_rates_count(r) && !err; i++) {
			char cpu[16], s[32], pk[32], p0[32], p1[32], dr[32], co[32];
			tacho_msr_rates_get(r, i, &x);
			snprintf(cpu, sizeof(cpu), "%d", x.cpu);
			fmt_num(x.seconds, "%.3f", s, sizeof(s));
			fmt_num(x.package_w, "%.3f", pk, sizeof(pk));
			fmt_num(x.pp0_w, "%.3f", p0, sizeof(p0));
			fmt_num(x.pp1_w, "%.3f", p1, sizeof(p1));
			fmt_num(x.dram_w, "%.3f", dr, sizeof(dr));
			fmt_num(x.core_w, "%.3f", co, sizeof(co));
			why[0] = '\0';
			if (x.power_err)
				why_text(w, x.power_why, TACHO_HINT_NONE, why, sizeof(why));
			err = tc_table_add(t, (const char *const[]){ cpu, s, pk, p0, p1, dr, co, why });
		}
		if (!err)
			tc_table_print(t, f, 2, 2);
		tc_table_free(t);
	}
	return err;
}

static int write_rates_json(const struct tacho_msr_rates *r, FILE *f, enum tacho_format fmt,
			    const struct tc_write_settings *w)
{
	unsigned what = tc_msr_rates_what(r);
	struct tacho_msr_rate x = { .sz = sizeof(x) };
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "interval_ms", tc_msr_rates_interval(r));
	tc_json_arr_begin(&j, "measured");
	if (what & TACHO_MSR_RATE_FREQ)
		tc_json_str(&j, NULL, "freq");
	if (what & TACHO_MSR_RATE_POWER)
		tc_json_str(&j, NULL, "power");
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "cpus");
	for (size_t i = 0; i < tacho_msr_rates_count(r); i++) {
		tacho_msr_rates_get(r, i, &x);
		tc_json_obj_begin(&j, NULL);
		tc_json_int(&j, "cpu", x.cpu);
		tc_json_double(&j, "seconds", x.seconds);
		tc_json_double(&j, "tsc_mhz", x.tsc_mhz);
		tc_json_double(&j, "busy_mhz", x.busy_mhz);
		tc_json_double(&j, "avg_mhz", x.avg_mhz);
		tc_json_double(&j, "c0_pct", x.c0_pct);
		tc_json_str(&j, "freq_error", x.freq_err ? x.freq_why : NULL);
		tc_json_double(&j, "package_w", x.package_w);
		tc_json_double(&j, "pp0_w", x.pp0_w);
		tc_json_double(&j, "pp1_w", x.pp1_w);
		tc_json_double(&j, "dram_w", x.dram_w);
		tc_json_double(&j, "core_w", x.core_w);
		tc_json_double(&j, "energy_unit_j", x.energy_unit_j);
		tc_json_str(&j, "power_error", x.power_err ? x.power_why : NULL);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

static void write_rates_csv(const struct tacho_msr_rates *r, FILE *f, const struct tc_write_settings *w)
{
	static const char *const head[] = { "cpu", "seconds", "tsc_mhz", "busy_mhz", "avg_mhz",
					    "c0_pct", "package_w", "pp0_w", "pp1_w", "dram_w",
					    "core_w", "error" };
	struct tacho_msr_rate x = { .sz = sizeof(x) };

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < tacho_msr_rates_count(r); i++) {
		char cpu[16], v[10][40], why[1600];
		double d[10];

		tacho_msr_rates_get(r, i, &x);
		snprintf(cpu, sizeof(cpu), "%d", x.cpu);
		d[0] = x.seconds;
		d[1] = x.tsc_mhz;
		d[2] = x.busy_mhz;
		d[3] = x.avg_mhz;
		d[4] = x.c0_pct;
		d[5] = x.package_w;
		d[6] = x.pp0_w;
		d[7] = x.pp1_w;
		d[8] = x.dram_w;
		d[9] = x.core_w;
		for (int k = 0; k < 10; k++) {
			v[k][0] = '\0';
			if (!isnan(d[k]))
				snprintf(v[k], sizeof(v[k]), "%.17g", d[k]);
		}
		snprintf(why, sizeof(why), "%s%s%s", x.freq_err ? x.freq_why : "",
			 x.freq_err && x.power_err ? "; " : "", x.power_err ? x.power_why : "");
		{
			const char *row[] = { cpu, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
					      v[8], v[9], why };
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
			tc_csv_row(f, w, row, ARRAY_SIZE(row));
		}
	}
}

int tacho_msr_rates_write(const struct tacho_msr_rates *r, FILE *f, enum tacho_format fmt,
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
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_rates_json(r, f, fmt, &w);
	case TACHO_FORMAT_CSV:
		write_rates_csv(r, f, &w);
		break;
	default:
		err = write_rates_table(r, f, &w);
		break;
	}
	return err ? err : tc_write_status(f);
}
