/* save.c - saving the writable registers to a text file and restoring them, so that an
 * experiment with the counters can be undone. The file, line by line:
 *
 *     tacho-msr-save 1
 *     processor Intel 0x6 0x55
 *     # cpu register address value
 *     0 IA32_PMC0 0xc1 0x0000000000000000
 *     0 IA32_PMC7 0xc8 absent
 *
 * "absent": the CPU answered EIO (a counter it does not have); restore skips it. What
 * save writes, parse reads back to the same set, and writing that set gives the same
 * bytes. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msr/msr.h"
#include "output/output.h"

#define MAGIC "tacho-msr-save"
#define VERSION 1

static bool savable(const struct tacho_msr *m, const struct tacho_msr_cpu *cpu)
{
	return m->writable && !m->no_save && tacho_msr_applies(m, cpu);
}

int tacho_msr_save_read(struct tacho_msr_dev *dev, const int *cpus, size_t n,
			struct tacho_msr_set **out)
{
	struct tacho_msr_set *set;
	int err;

	if (!dev || !out || (n && !cpus))
		return -EINVAL;
	*out = NULL;
	/* without a processor no register applies, and the file could not name it */
	if (dev->cpu.vendor == TACHO_VENDOR_UNKNOWN)
		return -TACHO_EMSRCPU;
	err = tacho_msr_set_new(0, &set);
	if (err)
		return err;
	set->has_cpu = true;
	set->cpu = dev->cpu;
	for (size_t c = 0; c < n; c++) {
		for (size_t i = 0, nm = tacho_msr_count(); i < nm; i++) {
			const struct tacho_msr *m = tacho_msr_at(i);
			struct tc_msr_entry *e;

			if (!savable(m, &dev->cpu))
				continue;
			e = tc_msr_set_push(set, cpus[c], m, m->address);
			if (!e) {
				err = -ENOMEM;
				goto out_err;
			}
			err = tacho_msr_rdmsr(dev, cpus[c], m->address, &e->value);
			e->has_value = !err;
			/* a register this CPU lacks (EIO) is recorded absent; anything else
			 * (no device, no permission) means nothing can be saved */
			if (err == -EIO) {
				if (tc_msr_entry_fail(dev, e, err, false)) {
					err = -ENOMEM;
					goto out_err;
				}
				err = 0;
			}
			if (err) {
				/* the failing read is the last entry, explained */
				if (tc_msr_entry_fail(dev, e, err, false))
					err = -ENOMEM;
				goto out_err;
			}
		}
	}
	*out = set;
	return 0;

out_err:
	/* what was read, with the failure last, tells the caller why */
	if (err != -ENOMEM) {
		*out = set;
		return err;
	}
	tacho_msr_set_free(set);
	return err;
}

int tacho_msr_save_write(const struct tacho_msr_set *set, FILE *f)
{
	if (!set || !f || !set->has_cpu)
		return -EINVAL;
	fprintf(f, "%s %d\nprocessor %s 0x%x 0x%x\n# cpu register address value\n", MAGIC,
		VERSION, tacho_cpu_vendor_name(set->cpu.vendor), set->cpu.family, set->cpu.model);
	for (size_t i = 0; i < set->n; i++) {
		const struct tc_msr_entry *e = &set->v[i];
		if (e->err)
			fprintf(f, "%d %s 0x%x absent\n", e->cpu, e->msr->name, e->address);
		else
			fprintf(f, "%d %s 0x%x 0x%016llx\n", e->cpu, e->msr->name, e->address,
				(unsigned long long)e->value);
	}
	return tc_write_status(f);
}

/* --- parsing --- */

struct parser {
	const char *name;
	unsigned line;
	struct tacho_diag *diag;
};

#define BAD(p, err, ...) tc_diag_set((p)->diag, (p)->name, (p)->line, 0, (err), __VA_ARGS__)

/* Splits line (NUL-terminated, modified) into at most max words. */
static size_t words(char *line, char **w, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return max + 1;
		w[n++] = t;
	}
	return n;
}

static int parse_hex32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (strncmp(s, "0x", 2) || tc_parse_u64(s, &v) || v > 0xffffffffull)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_processor(struct parser *p, char **w, size_t n, struct tacho_msr_cpu *cpu)
{
	uint32_t fam, model;
	unsigned v;

	if (n != 4 || strcmp(w[0], "processor"))
		return BAD(p, -TACHO_EPARSE, "expected 'processor VENDOR 0xFAMILY 0xMODEL'");
	for (v = 1; v < TACHO_VENDOR_COUNT; v++)
		if (!strcmp(w[1], tacho_cpu_vendor_name(v)))
			break;
	if (v == TACHO_VENDOR_COUNT)
		return BAD(p, -TACHO_EPARSE, "unknown vendor '%s'", w[1]);
	if (parse_hex32(w[2], &fam) || parse_hex32(w[3], &model) || fam > 0x10e || model > 0xff)
		return BAD(p, -TACHO_EPARSE, "bad family or model '%s %s' (hex, with 0x)", w[2],
			   w[3]);
	memset(cpu, 0, sizeof(*cpu));
	cpu->vendor = (enum tacho_cpu_vendor)v;
	cpu->family = fam;
	cpu->model = model;
	return 0;
}

static int parse_entry(struct parser *p, char **w, size_t n, struct tacho_msr_set *set)
{
	const struct tacho_msr *m;
	struct tc_msr_entry *e;
	uint64_t cpu, value = 0;
	uint32_t addr;
	bool absent;

	if (n != 4)
		return BAD(p, -TACHO_EPARSE, "expected 'CPU REGISTER 0xADDRESS 0xVALUE'");
	if (tc_parse_u64(w[0], &cpu) || cpu > 65535)
		return BAD(p, -TACHO_EPARSE, "bad CPU number '%s'", w[0]);
	m = tc_msr_by_name(w[1]);
	if (!m)
		return BAD(p, -TACHO_EPARSE, "tacho knows no register '%s'", w[1]);
	if (parse_hex32(w[2], &addr) || addr != m->address)
		return BAD(p, -TACHO_EPARSE, "%s is at 0x%x, not '%s'", m->name, m->address, w[2]);
	if (!savable(m, &set->cpu))
		return BAD(p, -TACHO_EPARSE, "%s is not one tacho saves for this processor",
			   m->name);
	absent = !strcmp(w[3], "absent");
	if (!absent && (strlen(w[3]) != 18 || strncmp(w[3], "0x", 2) ||
			strspn(w[3] + 2, "0123456789abcdef") != 16 ||
			tc_parse_u64(w[3], &value)))
		return BAD(p, -TACHO_EPARSE, "bad value '%s' (0x and 16 lower-case hex digits, "
			   "or 'absent')", w[3]);
	if (!absent && m->rest_reserved && (value & ~tc_msr_fields_mask(m)))
		return BAD(p, -TACHO_EPARSE, "%s sets bits %s reserves", w[3], m->name);
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].cpu == (int)cpu && set->v[i].msr == m)
			return BAD(p, -TACHO_EPARSE, "%s of CPU %d is saved twice", m->name, (int)cpu);
	e = tc_msr_set_push(set, (int)cpu, m, addr);
	if (!e)
		return -ENOMEM;
	e->value = value;
	e->has_value = !absent;
	if (absent && tc_msr_entry_failf(e, -EIO, TACHO_HINT_NONE, "absent when saved: the "
					 "CPU does not implement it"))
		return -ENOMEM;
	return 0;
}

int tacho_msr_save_parse(const char *text, size_t len, const char *name,
			 struct tacho_msr_set **out, struct tacho_diag *diag)
{
	struct parser p = { .name = name ? name : "the save file", .diag = diag };
	struct tacho_msr_set *set = NULL;
	size_t pos = 0;
	int err, stage = 0;

	if (!out || (len && !text) || tc_diag_check(diag))
		return -EINVAL;
	*out = NULL;
	err = tacho_msr_set_new(0, &set);
	if (err)
		return err;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char line[512], *w[6];
		size_t n;

		p.line++;
		if (ll >= sizeof(line)) {
			err = BAD(&p, -TACHO_EPARSE, "line too long");
			goto out_err;
		}
		memcpy(line, text + pos, ll);
		line[ll] = '\0';
		pos += ll + (nl != NULL);
		if (memchr(line, '\0', ll)) {
			err = BAD(&p, -TACHO_EPARSE, "a NUL byte in a text file");
			goto out_err;
		}
		if (ll && line[ll - 1] == '\r')
			line[--ll] = '\0';
		n = words(line, w, 5);
		if (n == 0 || w[0][0] == '#')
			continue;
		if (stage == 0) {
			uint64_t v;
			if (n != 2 || strcmp(w[0], MAGIC) || tc_parse_u64(w[1], &v)) {
				err = BAD(&p, -TACHO_EPARSE, "not a tacho msr save file (it starts "
					  "with '" MAGIC " %d')", VERSION);
				goto out_err;
			}
			if (v != VERSION) {
				err = BAD(&p, -TACHO_EVERSION, "version %s of the save format; this "
					  "tacho reads version %d", w[1], VERSION);
				goto out_err;
			}
			stage = 1;
		} else if (stage == 1) {
			err = parse_processor(&p, w, n, &set->cpu);
			if (err)
				goto out_err;
			set->has_cpu = true;
			stage = 2;
		} else {
			err = parse_entry(&p, w, n, set);
			if (err)
				goto out_err;
		}
	}
	if (stage < 2) {
		err = stage == 0 ? tc_diag_set(diag, p.name, 0, 0, -TACHO_EEMPTY, "empty: no "
					      "'" MAGIC "' line") :
			BAD(&p, -TACHO_ETRUNC, "no 'processor' line");
		goto out_err;
	}
	*out = set;
	return 0;

out_err:
	tacho_msr_set_free(set);
	return err;
}

int tacho_msr_set_processor(const struct tacho_msr_set *set, struct tacho_msr_cpu *out)
{
	if (!set || !out)
		return -EINVAL;
	if (!set->has_cpu)
		return -TACHO_ENOVALUE;
	*out = set->cpu;
	return 0;
}

/* --- restoring --- */

static bool same_processor(const struct tacho_msr_cpu *a, const struct tacho_msr_cpu *b)
{
	/* the same part under a hypervisor or not is the same processor */
	return a->vendor == b->vendor && a->family == b->family && a->model == b->model;
}

int tacho_msr_restore(struct tacho_msr_dev *dev, const struct tacho_msr_set *saved,
		      unsigned flags, struct tacho_msr_set *report)
{
	if (!dev || !saved || !report || !saved->has_cpu)
		return -EINVAL;
	if (!same_processor(&saved->cpu, &dev->cpu))
		return -TACHO_EMSRCPU;
	if (!(flags & TACHO_MSR_FORCE))
		return -TACHO_ENOFORCE;
	for (size_t i = 0; i < saved->n; i++) {
		const struct tc_msr_entry *s = &saved->v[i];
		struct tc_msr_entry *e;
		bool writing;
		int err;

		if (s->err)
			continue;
		e = tc_msr_set_push(report, s->cpu, s->msr, s->address);
		if (!e)
			return -ENOMEM;
		e->wrote = true;
		e->written_value = s->value;
		writing = false;
		err = tacho_msr_rdmsr(dev, s->cpu, s->address, &e->before);
		if (!err) {
			e->value = e->before;
			e->has_value = true;
			writing = true;
			err = tacho_msr_wrmsr(dev, s->cpu, s->msr, s->value, flags);
		}
		if (!err) {
			e->written = true;
			writing = false;
			err = tacho_msr_rdmsr(dev, s->cpu, s->address, &e->value);
			e->has_value = !err;
		}
		if (err) {
			if (tc_msr_entry_fail(dev, e, err, writing))
				return -ENOMEM;
			return err;
		}
	}
	return 0;
}
