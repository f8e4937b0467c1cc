/* json.c - a small streaming JSON writer (RFC 8259), shared by every --json output. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "output/output.h"
#include "util/util.h"

void tc_json_init(struct tc_json *j, FILE *f, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
	j->first[0] = true;
}

void tc_json_escape(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fprintf(f, "\\u%04x", c);
			} else if (c >= 0x80) {
				/* JSON is UTF-8 (RFC 8259 section 8.1): a byte that is not
				 * becomes U+FFFD, as a decoder would show it (docs/schemas.md) */
				size_t n = tc_utf8_seq((const unsigned char *)s + i, len - i);
				if (n) {
					fwrite(s + i, 1, n, f);
					i += n - 1;
				} else {
					fputs("\\ufffd", f);
				}
			} else {
				fputc(c, f);
			}
		}
	}
	fputc('"', f);
}

static void indent(struct tc_json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Writes the separator and the key that come before any value. */
static void prefix(struct tc_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth > 0)
		indent(j);
	if (key) {
		tc_json_escape(j->f, key, strlen(key));
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void open_(struct tc_json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	if (j->depth + 1 >= TC_JSON_MAX_DEPTH) {
		j->bad = true;
		return;
	}
	j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct tc_json *j, char c)
{
	bool empty;

	if (j->depth == 0) {
		j->bad = true;
		return;
	}
	empty = j->first[j->depth];
	j->depth--;
	if (!empty)
		indent(j);
	fputc(c, j->f);
}

void tc_json_obj_begin(struct tc_json *j, const char *key) { open_(j, key, '{'); }
void tc_json_obj_end(struct tc_json *j) { close_(j, '}'); }
void tc_json_arr_begin(struct tc_json *j, const char *key) { open_(j, key, '['); }
void tc_json_arr_end(struct tc_json *j) { close_(j, ']'); }

void tc_json_strn(struct tc_json *j, const char *key, const char *val, size_t len)
{
	prefix(j, key);
	tc_json_escape(j->f, val, len);
}

void tc_json_str(struct tc_json *j, const char *key, const char *val)
{
	if (!val) {
		tc_json_null(j, key);
		return;
	}
	tc_json_strn(j, key, val, strlen(val));
}

void tc_json_int(struct tc_json *j, const char *key, int64_t val)
{
	prefix(j, key);
	fprintf(j->f, "%" PRId64, val);
}

void tc_json_uint(struct tc_json *j, const char *key, uint64_t val)
{
	prefix(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void tc_json_double(struct tc_json *j, const char *key, double val)
{
	char buf[32];

	prefix(j, key);
	if (!isfinite(val))
		fputs("null", j->f);
	else if (val == floor(val) && fabs(val) < 9.007199254740992e15)
		fprintf(j->f, "%.1f", val);
	else
		fputs(tc_fmt_shortest(val, buf, sizeof(buf)), j->f);
}

void tc_json_bool(struct tc_json *j, const char *key, bool val)
{
	prefix(j, key);
	fputs(val ? "true" : "false", j->f);
}

void tc_json_null(struct tc_json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}

int tc_json_finish(struct tc_json *j)
{
	if (j->pretty)
		fputc('\n', j->f);
	if (j->bad || j->depth != 0)
		return -TACHO_EPARSE;
	return ferror(j->f) ? -EIO : 0;
}
