/* sysfs.c - events of the PMUs the kernel lists in /sys/bus/event_source/devices:
 * pmu/term=value,.../ through the PMU's format files, and pmu/alias/ through its
 * events folder (with .scale and .unit beside each alias).
 *
 * A format file says where a term's value goes: "config:0-7" (bits 0-7 of
 * attr.config), "config1:0-63", "config:18" (one bit), or several ranges
 * "config:0-7,32-35" that take the value's bits low ones first (the kernel's
 * Documentation/ABI/testing/sysfs-bus-event_source-devices-format). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"
#include "tacho/errors.h"

bool tc_events_safe_component(const char *s, size_t len)
{
	if (len == 0 || len > 200 || (len == 1 && s[0] == '.') ||
	    (len == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

struct fmt_range {
	unsigned lo, hi;
};

struct format {
	int field;                 /* 0: config, 1: config1, 2: config2 */
	struct fmt_range r[8];
	unsigned n;
	unsigned width;            /* total bits */
};

/* Parses "config1:0-7,32-35". 0 or -TACHO_EPARSE. */
static int parse_format(const char *s, struct format *f)
{
	const char *p;

	memset(f, 0, sizeof(*f));
	if (strncmp(s, "config2:", 8) == 0) {
		f->field = 2;
		p = s + 8;
	} else if (strncmp(s, "config1:", 8) == 0) {
		f->field = 1;
		p = s + 8;
	} else if (strncmp(s, "config:", 7) == 0) {
		f->field = 0;
		p = s + 7;
	} else {
		return -TACHO_EPARSE;
	}
	for (;;) {
		char *end;
		unsigned long lo, hi;

		if (*p < '0' || *p > '9')
			return -TACHO_EPARSE;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -TACHO_EPARSE;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (hi < lo || hi > 63 || f->n == ARRAY_SIZE(f->r))
			return -TACHO_EPARSE;
		f->r[f->n].lo = (unsigned)lo;
		f->r[f->n].hi = (unsigned)hi;
		f->n++;
		f->width += (unsigned)(hi - lo + 1);
		if (*p == ',') {
			p++;
			continue;
		}
		return *p == '\0' ? 0 : -TACHO_EPARSE;
	}
}

static __u64 *field_of(struct perf_event_attr *attr, int field)
{
	return field == 0 ? &attr->config : field == 1 ? &attr->config1 : &attr->config2;
}

/* Scatters value into the format's ranges. False when it does not fit. */
static bool put_format(const struct format *f, uint64_t value, struct perf_event_attr *attr)
{
	__u64 *dst = field_of(attr, f->field);

	for (unsigned i = 0; i < f->n; i++) {
		unsigned w = f->r[i].hi - f->r[i].lo + 1;
		uint64_t mask = w >= 64 ? ~0ull : (1ull << w) - 1;
		*dst = (*dst & ~(mask << f->r[i].lo)) | ((value & mask) << f->r[i].lo);
		value = w >= 64 ? 0 : value >> w;
	}
	return value == 0;
}

struct pmu_parse {
	const struct tc_events_ctx *ctx;
	const char *src;           /* the user's spec, for diagnostics */
	struct tacho_diag *diag;
	const char *pmu;           /* NUL-terminated PMU name */
	struct tc_event *ev;
};

static int pp_err(struct pmu_parse *pp, size_t off, int err, const char *fmt, ...) TC_PRINTF(4, 5);
static int pp_err(struct pmu_parse *pp, size_t off, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tc_diag_set(pp->diag, pp->src, 0, (unsigned)off + 1, err, "%s", msg);
}

static void pmu_path(const struct pmu_parse *pp, char *buf, size_t size, const char *fmt, ...)
	TC_PRINTF(4, 5);
static void pmu_path(const struct pmu_parse *pp, char *buf, size_t size, const char *fmt, ...)
{
	int n = snprintf(buf, size, "%s/%s/", pp->ctx->sysfs_root, pp->pmu);
	va_list ap;

	if (n < 0 || (size_t)n >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - (size_t)n, fmt, ap);
	va_end(ap);
}

static int parse_terms(struct pmu_parse *pp, const char *s, size_t len, size_t col_base,
		       bool in_alias, const char *alias_name);

/* pmu/alias/: the alias file holds terms like "event=0x3c,umask=0x00". */
static int apply_alias(struct pmu_parse *pp, const char *name, size_t nlen, size_t col)
{
	char path[1024], *text = NULL, line[128], aname[256];
	size_t tlen = 0;
	int r;

	snprintf(aname, sizeof(aname), "%.*s", (int)nlen, name);
	pmu_path(pp, path, sizeof(path), "events/%s", aname);
	r = tc_read_file(path, &text, &tlen, 64 * 1024);
	if (r == -ENOENT || r == -ENOTDIR)
		return -ENOENT;   /* not an alias: the caller says so */
	if (r)
		return pp_err(pp, col, r, "cannot read the alias %s: %s", path, tacho_strerror(r));
	while (tlen && (text[tlen - 1] == '\n' || text[tlen - 1] == ' '))
		text[--tlen] = '\0';
	r = parse_terms(pp, text, tlen, col, true, aname);
	free(text);
	if (r)
		return r;
	pmu_path(pp, path, sizeof(path), "events/%s.unit", aname);
	r = tc_read_line_file(path, line, sizeof(line));
	if (r && r != -ENOENT)
		return pp_err(pp, col, r, "cannot read the unit of '%s' (%s): %s", aname, path,
			      tacho_strerror(r));
	if (r == 0 && line[0]) {
		free(pp->ev->unit_buf);
		pp->ev->unit_buf = tc_strdup(tc_trim(line));
		if (!pp->ev->unit_buf)
			return pp_err(pp, col, -ENOMEM, "out of memory");
		pp->ev->unit = pp->ev->unit_buf;
	}
	pmu_path(pp, path, sizeof(path), "events/%s.scale", aname);
	r = tc_read_line_file(path, line, sizeof(line));
	if (r == 0) {
		double v;
		/* a scale that cannot be used would leave the value unscaled, wrong by
		 * the factor the kernel meant: refuse the event instead */
		if (tc_parse_double(tc_trim(line), &v) != 0 || !(v > 0))
			return pp_err(pp, col, -TACHO_EPARSE, "the scale of '%s' is not a "
				      "positive number ('%s' in %s)", aname, tc_trim(line), path);
		pp->ev->scale = v;
	} else if (r != -ENOENT) {
		return pp_err(pp, col, r, "cannot read the scale of '%s' (%s): %s", aname, path,
			      tacho_strerror(r));
	}
	return 0;
}

static int parse_one_term(struct pmu_parse *pp, const char *key, size_t klen, const char *val,
			  size_t vlen, bool has_val, size_t kcol, size_t vcol, bool in_alias,
			  const char *alias_name)
{
	char path[1024], fmt[256], kname[128];
	uint64_t v = 1;
	struct format f;
	int r;

	if (!tc_events_safe_component(key, klen))
		return pp_err(pp, kcol, -TACHO_EPARSE, "expected a term name (letters, digits, "
			      "'_', '-', '.') in the terms of PMU '%s'", pp->pmu);
	snprintf(kname, sizeof(kname), "%.*s", (int)klen, key);
	if (!in_alias && strcmp(kname, "name") == 0) {
		if (!has_val || vlen == 0)
			return pp_err(pp, vcol, -TACHO_EPARSE, "expected a name after 'name='");
		free(pp->ev->name);
		pp->ev->name = tc_strndup(val, vlen);
		return pp->ev->name ? 0 : pp_err(pp, vcol, -ENOMEM, "out of memory");
	}
	if (has_val) {
		char num[64];

		if (vlen == 0 || vlen >= sizeof(num)) {
			r = vlen ? -TACHO_EOUTOFRANGE : -TACHO_EPARSE;
		} else {
			memcpy(num, val, vlen);
			num[vlen] = '\0';
			r = tc_parse_u64(num, &v);
		}
		if (r) {
			if (in_alias)
				return pp_err(pp, kcol, -TACHO_EPARSE,
					      "the alias '%s' of PMU '%s' has a value tacho cannot "
					      "read: '%.*s'", alias_name, pp->pmu, (int)vlen, val);
			return pp_err(pp, vcol, r == -TACHO_EOUTOFRANGE ? r : -TACHO_EPARSE,
				      r == -TACHO_EOUTOFRANGE ? "the value does not fit in 64 bits" :
				      "expected a number (decimal or 0x hex) for '%s'", kname);
		}
	}
	if (!strcmp(kname, "config") || !strcmp(kname, "config1") || !strcmp(kname, "config2")) {
		if (!has_val)
			return pp_err(pp, kcol, -TACHO_EPARSE, "expected '=' and a value after '%s'",
				      kname);
		*field_of(&pp->ev->attr, kname[6] ? kname[6] - '0' : 0) = v;
		return 0;
	}
	if (!strcmp(kname, "period")) {
		if (!has_val)
			return pp_err(pp, kcol, -TACHO_EPARSE, "expected '=' and a value after 'period'");
		pp->ev->attr.sample_period = v;
		return 0;
	}
	pmu_path(pp, path, sizeof(path), "format/%s", kname);
	r = tc_read_line_file(path, fmt, sizeof(fmt));
	if (r == 0) {
		if (parse_format(tc_trim(fmt), &f) != 0)
			return pp_err(pp, kcol, -TACHO_EPARSE, "cannot read the format of '%s' "
				      "('%s' in %s)", kname, fmt, path);
		if (!put_format(&f, v, &pp->ev->attr)) {
			if (in_alias)
				return pp_err(pp, kcol, -TACHO_EOUTOFRANGE, "the alias '%s' sets '%s' to "
					      "a value wider than its %u bits", alias_name, kname,
					      f.width);
			return pp_err(pp, vcol, -TACHO_EOUTOFRANGE, "0x%llx does not fit in '%s' "
				      "(%u bits: %s)", (unsigned long long)v, kname, f.width, fmt);
		}
		return 0;
	}
	if (!has_val && !in_alias) {
		r = apply_alias(pp, key, klen, kcol);
		if (r != -ENOENT)
			return r;
		return pp_err(pp, kcol, -TACHO_ENOEVENT, "PMU '%s' has no term or event '%s' "
			      "(see %s/%s/format and events)", pp->pmu, kname, pp->ctx->sysfs_root,
			      pp->pmu);
	}
	return pp_err(pp, kcol, -TACHO_ENOEVENT, "PMU '%s' has no term '%s' (see %s/%s/format)",
		      pp->pmu, kname, pp->ctx->sysfs_root, pp->pmu);
}

/* Terms separated by ','; col_base is where s starts in the user's spec (for an
 * alias's content, the column of the alias's name). */
static int parse_terms(struct pmu_parse *pp, const char *s, size_t len, size_t col_base,
		       bool in_alias, const char *alias_name)
{
	size_t pos = 0;

	if (len == 0)
		return in_alias ? 0 : pp_err(pp, col_base, -TACHO_EPARSE,
					     "expected a term or event name of PMU '%s'", pp->pmu);
	while (pos <= len) {
		size_t k0 = pos, klen, v0 = 0, vlen = 0;
		bool has_val = false;
		int r;

		while (pos < len && s[pos] != ',' && s[pos] != '=')
			pos++;
		klen = pos - k0;
		if (pos < len && s[pos] == '=') {
			has_val = true;
			v0 = ++pos;
			while (pos < len && s[pos] != ',')
				pos++;
			vlen = pos - v0;
		}
		if (klen == 0)
			return pp_err(pp, in_alias ? col_base : col_base + k0, -TACHO_EPARSE,
				      "expected a term name");
		r = parse_one_term(pp, s + k0, klen, s + v0, vlen, has_val,
				   in_alias ? col_base : col_base + k0,
				   in_alias ? col_base : col_base + v0, in_alias, alias_name);
		if (r)
			return r;
		if (pos >= len)
			break;
		pos++;   /* ',' */
		if (pos == len)
			return pp_err(pp, in_alias ? col_base : col_base + pos, -TACHO_EPARSE,
				      "expected a term after ','");
	}
	return 0;
}

static int pmu_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* The PMUs the folder has, comma-separated, for an error message. */
static void pmu_names(const char *root, char *buf, size_t size)
{
	struct dirent **ents;
	int n = scandir(root, &ents, pmu_filter, alphasort);
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (len + strlen(ents[i]->d_name) + 6 < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
						ents[i]->d_name);
		else if (len + 4 < size && (len < 3 || strcmp(buf + len - 3, "...")))
			len += (size_t)snprintf(buf + len, size - len, ", ...");
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	if (!buf[0])
		snprintf(buf, size, "none");
}

int tc_pmu_parse(const struct tc_events_ctx *ctx, const char *src, size_t start, size_t end,
		 struct tc_event *ev, struct tacho_diag *diag)
{
	const char *slash = memchr(src + start, '/', end - start);
	const char *close;
	size_t nlen = (size_t)(slash - (src + start)), t0;
	char pmu[256], path[1024];
	struct pmu_parse pp = { .ctx = ctx, .src = src, .diag = diag, .pmu = pmu, .ev = ev };
	long long type;
	int r;

	if (nlen == 0)
		return pp_err(&pp, start, -TACHO_EPARSE, "expected a PMU name before '/'");
	if (!tc_events_safe_component(src + start, nlen))
		return pp_err(&pp, start, -TACHO_EPARSE, "expected a PMU name (letters, digits, "
			      "'_', '-', '.') before '/'");
	snprintf(pmu, sizeof(pmu), "%.*s", (int)nlen, src + start);
	t0 = start + nlen + 1;
	close = memchr(src + t0, '/', end - t0);
	if (!close)
		return pp_err(&pp, end, -TACHO_EPARSE, "expected '/' to close the terms of PMU '%s'",
			      pmu);
	snprintf(path, sizeof(path), "%s/%s/type", ctx->sysfs_root, pmu);
	r = tc_read_int_file(path, &type);
	if (r == -ENOENT || r == -ENOTDIR) {
		char have[200];
		pmu_names(ctx->sysfs_root, have, sizeof(have));
		bool core = strcmp(pmu, "cpu") == 0 || tc_starts_with(pmu, "cpu_");

		pp_err(&pp, start, -TACHO_ENOEVENT, "no PMU '%s' in %s (there are: %s%s)", pmu,
		       ctx->sysfs_root, have, core ? "; no core PMU, as in a VM without a "
		       "virtual PMU" : "");
		if (core && pp.diag)
			pp.diag->hint = TACHO_HINT_MACHINE;   /* what this machine allows */
		return -TACHO_ENOEVENT;
	}
	if (r || type < 0 || type > 0xffffffffll)
		return pp_err(&pp, start, r ? r : -TACHO_EPARSE, "cannot read %s: %s", path,
			      r ? tacho_strerror(r) : "not a PMU type");
	ev->attr.type = (uint32_t)type;
	ev->source = TC_EV_PMU;
	ev->pmu = tc_strdup(pmu);
	if (!ev->pmu)
		return pp_err(&pp, start, -ENOMEM, "out of memory");
	/* the core PMU ("cpu", or "cpu_core"/"cpu_atom" on hybrid parts) has the counters */
	ev->uses_counter = type == PERF_TYPE_RAW || tc_starts_with(pmu, "cpu_") ||
			   strcmp(pmu, "cpu") == 0;
	r = parse_terms(&pp, src + t0, (size_t)(close - (src + t0)), t0, false, NULL);
	if (r)
		return r;
	return (int)(close - src) + 1;
}
