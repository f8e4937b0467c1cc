/* json.c - a small streaming JSON writer (RFC 8259), shared by every --json output. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util/util.h"

/*
 * Each call's text (separator, indentation, key and value) is put together in a
 * buffer on the stack and handed to stdio in one fwrite: stdio's cost is per call, and
 * a character at a time made half of an 80,000-region report. Nothing stays buffered
 * between calls, so a caller may still write to the FILE between them, unless it asked
 * for tc_json_hold: then each call's text joins a larger buffer that goes to stdio when
 * full and at tc_json_finish (a fifth of a large report was fwrite's own cost).
 */
#define JSON_HOLD_SIZE (64 * 1024)

struct jbuf {
	FILE *f;
	struct tc_json *j;      /* the writer whose hold buffer takes the text, or NULL */
	size_t n;
	char b[512];
};

/* Hands the held text to stdio. */
static void drain(struct tc_json *j)
{
	if (j->held)
		fwrite(j->hold, 1, j->held, j->f);
	j->held = 0;
}

/* Text for the FILE: into the hold buffer where there is one, else to stdio. */
static void emit(FILE *f, struct tc_json *j, const char *s, size_t len)
{
	if (!j || !j->hold) {
		fwrite(s, 1, len, f);
		return;
	}
	if (len > JSON_HOLD_SIZE - j->held) {
		drain(j);
		if (len > JSON_HOLD_SIZE) {
			fwrite(s, 1, len, f);
			return;
		}
	}
	memcpy(j->hold + j->held, s, len);
	j->held += len;
}

static void jb_flush(struct jbuf *o)
{
	if (o->n)
		emit(o->f, o->j, o->b, o->n);
	o->n = 0;
}

static void jb_put(struct jbuf *o, const char *s, size_t len)
{
	if (len > sizeof(o->b) - o->n) {
		jb_flush(o);
		if (len > sizeof(o->b)) {
			emit(o->f, o->j, s, len);
			return;
		}
	}
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static void jb_puts(struct jbuf *o, const char *s)
{
	jb_put(o, s, strlen(s));
}

static void jb_putc(struct jbuf *o, char c)
{
	if (o->n == sizeof(o->b))
		jb_flush(o);
	o->b[o->n++] = c;
}

void tc_json_init(struct tc_json *j, FILE *f, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
	j->first[0] = true;
}

/* A byte that goes into a string as it is: printable ASCII but the quote and the
 * backslash. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void escape(struct jbuf *o, const char *s, size_t len)
{
	jb_putc(o, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t run;
		char u[8];

		for (run = 0; i + run < len && plain((unsigned char)s[i + run]); run++)
			;
		if (run) {
			jb_put(o, s + i, run);
			i += run - 1;
			continue;
		}
		switch (c) {
		case '"': jb_puts(o, "\\\""); break;
		case '\\': jb_puts(o, "\\\\"); break;
		case '\n': jb_puts(o, "\\n"); break;
		case '\r': jb_puts(o, "\\r"); break;
		case '\t': jb_puts(o, "\\t"); break;
		case '\b': jb_puts(o, "\\b"); break;
		case '\f': jb_puts(o, "\\f"); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				snprintf(u, sizeof(u), "\\u%04x", c);
				jb_puts(o, u);
			} else {
				/* JSON is UTF-8 (RFC 8259 section 8.1): a byte that is not
				 * becomes U+FFFD, as a decoder would show it (docs/schemas.md) */
				size_t n = tc_utf8_seq((const unsigned char *)s + i, len - i);
				if (n) {
					jb_put(o, s + i, n);
					i += n - 1;
				} else {
					jb_puts(o, "\\ufffd");
				}
			}
		}
	}
	jb_putc(o, '"');
}

void tc_json_escape(FILE *f, const char *s, size_t len)
{
	struct jbuf o;

	/* the fields one by one: an initializer would clear the whole buffer */
	o.f = f;
	o.j = NULL;
	o.n = 0;
	escape(&o, s, len);
	jb_flush(&o);
}

static void indent(struct tc_json *j, struct jbuf *o)
{
	static const char spaces[] = "                                                                ";

	if (!j->pretty)
		return;
	jb_putc(o, '\n');
	for (size_t left = 2 * (size_t)j->depth, n; left; left -= n) {
		n = left < sizeof(spaces) - 1 ? left : sizeof(spaces) - 1;
		jb_put(o, spaces, n);
	}
}

/* Writes the separator and the key that come before any value. */
static void prefix(struct tc_json *j, struct jbuf *o, const char *key)
{
	o->f = j->f;
	o->j = j;
	o->n = 0;
	if (!j->first[j->depth])
		jb_putc(o, ',');
	j->first[j->depth] = false;
	if (j->depth > 0)
		indent(j, o);
	if (key) {
		escape(o, key, strlen(key));
		jb_puts(o, j->pretty ? ": " : ":");
	}
}

static void open_(struct tc_json *j, const char *key, char c)
{
	struct jbuf o;

	prefix(j, &o, key);
	jb_putc(&o, c);
	jb_flush(&o);
	if (j->depth + 1 >= TC_JSON_MAX_DEPTH) {
		j->bad = true;
		return;
	}
	j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct tc_json *j, char c)
{
	struct jbuf o;
	bool empty;

	if (j->depth == 0) {
		j->bad = true;
		return;
	}
	o.f = j->f;
	o.j = j;
	o.n = 0;
	empty = j->first[j->depth];
	j->depth--;
	if (!empty)
		indent(j, &o);
	jb_putc(&o, c);
	jb_flush(&o);
}

void tc_json_obj_begin(struct tc_json *j, const char *key) { open_(j, key, '{'); }
void tc_json_obj_end(struct tc_json *j) { close_(j, '}'); }
void tc_json_arr_begin(struct tc_json *j, const char *key) { open_(j, key, '['); }
void tc_json_arr_end(struct tc_json *j) { close_(j, ']'); }

void tc_json_strn(struct tc_json *j, const char *key, const char *val, size_t len)
{
	struct jbuf o;

	prefix(j, &o, key);
	escape(&o, val, len);
	jb_flush(&o);
}

void tc_json_str(struct tc_json *j, const char *key, const char *val)
{
	if (!val) {
		tc_json_null(j, key);
		return;
	}
	tc_json_strn(j, key, val, strlen(val));
}

/* The decimal digits of v, with a '-' when neg: the text of printf's %llu, or of
 * %lld of -v. */
static void put_decimal(struct jbuf *o, bool neg, uint64_t v)
{
	char buf[24];
	char *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (neg)
		*--p = '-';
	jb_put(o, p, (size_t)(buf + sizeof(buf) - p));
}

void tc_json_int(struct tc_json *j, const char *key, int64_t val)
{
	struct jbuf o;

	prefix(j, &o, key);
	/* the magnitude in unsigned arithmetic: INT64_MIN has no positive int64_t */
	put_decimal(&o, val < 0, val < 0 ? -(uint64_t)val : (uint64_t)val);
	jb_flush(&o);
}

void tc_json_uint(struct tc_json *j, const char *key, uint64_t val)
{
	struct jbuf o;

	prefix(j, &o, key);
	put_decimal(&o, false, val);
	jb_flush(&o);
}

void tc_json_double(struct tc_json *j, const char *key, double val)
{
	struct jbuf o;
	char buf[32];

	prefix(j, &o, key);
	if (!isfinite(val)) {
		jb_puts(&o, "null");
	} else if (val == floor(val) && fabs(val) < 9.007199254740992e15) {
		/* a whole number: "%.1f" is its digits and ".0", said here without
		 * printf's floating-point conversion; -0.0 keeps its sign */
		put_decimal(&o, signbit(val), (uint64_t)fabs(val));
		jb_puts(&o, ".0");
	} else {
		jb_puts(&o, tc_fmt_shortest(val, buf, sizeof(buf)));
	}
	jb_flush(&o);
}

void tc_json_bool(struct tc_json *j, const char *key, bool val)
{
	struct jbuf o;

	prefix(j, &o, key);
	jb_puts(&o, val ? "true" : "false");
	jb_flush(&o);
}

void tc_json_null(struct tc_json *j, const char *key)
{
	struct jbuf o;

	prefix(j, &o, key);
	jb_puts(&o, "null");
	jb_flush(&o);
}

void tc_json_hold(struct tc_json *j)
{
	/* a second call keeps what is held */
	if (!j->hold) {
		j->hold = malloc(JSON_HOLD_SIZE);
		j->held = 0;
	}
}

int tc_json_finish(struct tc_json *j)
{
	if (j->hold) {
		drain(j);
		free(j->hold);
		j->hold = NULL;
	}
	if (j->pretty)
		fputc('\n', j->f);
	if (j->bad || j->depth != 0)
		return -TACHO_EPARSE;
	return ferror(j->f) ? -EIO : 0;
}
