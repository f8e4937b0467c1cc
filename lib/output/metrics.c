/* metrics.c - the pieces of the Prometheus and OpenMetrics text expositions that every
 * writer of metrics shares (tacho serve's /metrics, tacho stat --push): metric names
 * made of event names, label values, # HELP / # TYPE / # UNIT and sample values, so
 * that a count has one name and one spelling wherever it is exposed (docs/serve.md). */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "output/output.h"

void tc_metric_part(const char *s, char *buf, size_t size)
{
	size_t o = 0;

	for (; *s && o + 1 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) && c < 0x80) {
			buf[o++] = (char)tolower(c);
		} else if (o && buf[o - 1] != '_') {
			buf[o++] = '_';
		}
	}
	while (o && buf[o - 1] == '_')
		o--;
	buf[o] = '\0';
	if (!o)
		snprintf(buf, size, "event");
}

void tc_metric_family(const char *event, const char *unit, char *name, size_t size,
		      const char **om_unit, double *factor)
{
	char part[160];

	tc_metric_part(event, part, sizeof(part));
	*om_unit = "";
	*factor = 1.0;
	if (!strcmp(unit, "msec")) {
		*om_unit = "seconds";
		*factor = 1e-3;
		snprintf(name, size, "tacho_%s_seconds", part);
	} else if (unit[0]) {
		char u[64];
		tc_metric_part(unit, u, sizeof(u));
		snprintf(name, size, "tacho_%s_%s", part, u);
		*om_unit = NULL;     /* a unit OpenMetrics has no name for: left out */
	} else {
		snprintf(name, size, "tacho_%s", part);
	}
}

void tc_metric_label_value(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

void tc_metric_value(FILE *out, double v)
{
	char b[48];

	if (!isfinite(v))
		b[0] = '\0';
	else if (v == floor(v) && fabs(v) < 9.007199254740992e15)
		snprintf(b, sizeof(b), "%.0f", v);
	else
		snprintf(b, sizeof(b), "%.15g", v);
	fputc(' ', out);
	fputs(b, out);
	fputc('\n', out);
}

void tc_metric_head(FILE *out, bool om, const char *name, const char *type, const char *unit,
		    const char *help)
{
	const char *suffix = !om && !strcmp(type, "counter") ? "_total" : "";

	fprintf(out, "# HELP %s%s %s\n", name, suffix, help);
	fprintf(out, "# TYPE %s%s %s\n", name, suffix, type);
	if (om && unit && *unit)
		fprintf(out, "# UNIT %s %s\n", name, unit);
}

void tc_metric_gauge(FILE *out, bool om, const char *name, const char *unit, const char *help,
		     double v)
{
	tc_metric_head(out, om, name, "gauge", unit, help);
	fputs(name, out);
	tc_metric_value(out, v);
}
