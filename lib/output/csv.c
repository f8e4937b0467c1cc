/* csv.c - RFC 4180 fields: quoted only when they must be. */
#include <string.h>

#include "output/output.h"

void tc_csv_field(FILE *f, char sep, bool first, const char *val)
{
	if (!first)
		fputc(sep, f);
	if (!val)
		return;
	if (!strchr(val, sep) && !strpbrk(val, "\"\r\n")) {
		fputs(val, f);
		return;
	}
	fputc('"', f);
	for (const char *p = val; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

void tc_csv_end(FILE *f)
{
	fputc('\n', f);
}
