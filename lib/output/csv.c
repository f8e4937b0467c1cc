/* csv.c - RFC 4180 fields: quoted only when they must be. */
#include <string.h>

#include "output/output.h"
#include "util/util.h"

void tc_csv_field(FILE *f, char sep, bool first, const char *val)
{
	struct tc_sb sb = TC_SB_INIT;

	if (!first)
		fputc(sep, f);
	if (!val)
		return;
	/* control bytes and bytes that are not UTF-8 as \xHH, as in the tables
	 * (docs/schemas.md, "Text from outside") */
	tc_sb_init(&sb);
	tc_sb_add_printable(&sb, val);
	val = sb.oom ? "?" : sb.buf;
	if (!strchr(val, sep) && !strpbrk(val, "\"\r\n")) {
		fputs(val, f);
		goto out_free;
	}
	fputc('"', f);
	for (const char *p = val; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
out_free:
	tc_sb_exit(&sb);
}

void tc_csv_end(FILE *f)
{
	fputc('\n', f);
}
