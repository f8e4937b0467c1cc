/* json-read.c - the strict JSON reader of json-read.h: a recursive descent over RFC
 * 8259's grammar that remembers the line and column of every value, so that a message
 * about a document's meaning (a missing key, a wrong type) can point into it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/json-read.h"
#include "util/util.h"

#define JR_MAX_DEPTH 128

struct jr {
	const char *s, *end, *source;
	const char *line_start;
	unsigned line;
	struct tacho_diag *diag;
	int err;
};

static unsigned jr_col(const struct jr *r, const char *p)
{
	return (unsigned)(p - r->line_start) + 1;
}

static int jr_fail(struct jr *r, const char *p, const char *what)
{
	if (!r->err)
		r->err = tc_diag_set(r->diag, r->source, r->line, jr_col(r, p), -TACHO_EPARSE,
				     "%s", what);
	return r->err;
}

static void jr_space(struct jr *r)
{
	while (r->s < r->end) {
		char c = *r->s;

		if (c == '\n') {
			r->line++;
			r->line_start = r->s + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			break;
		}
		r->s++;
	}
}

static int jr_value(struct jr *r, struct tc_jv *v, int depth);

/* A growing array of values (the elements of an array or an object). */
static struct tc_jv *jr_push(struct jr *r, struct tc_jv *v, size_t *cap)
{
	if (v->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 4;
		struct tc_jv *items = realloc(v->items, ncap * sizeof(*items));

		if (!items) {
			r->err = tc_diag_set(r->diag, r->source, r->line, 0, -ENOMEM,
					     "out of memory");
			return NULL;
		}
		v->items = items;
		*cap = ncap;
	}
	memset(&v->items[v->n], 0, sizeof(v->items[0]));
	return &v->items[v->n++];
}

static int jr_hex4(const char *p, unsigned *out)
{
	unsigned u = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		u <<= 4;
		if (c >= '0' && c <= '9')
			u |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			u |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			u |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = u;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong form, no
 * surrogate, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* A string literal at r->s (its opening quote): decoded into *str, *len. */
static int jr_string(struct jr *r, char **str, size_t *len)
{
	const char *p = r->s + 1, *q;
	char *o, *out;

	/* the decoded text is never longer than the literal */
	for (q = p; q < r->end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < r->end)
			q++;
	if (q >= r->end)
		return jr_fail(r, r->s, "a string does not end");
	out = o = malloc((size_t)(q - p) + 1);
	if (!out)
		return r->err = tc_diag_set(r->diag, r->source, r->line, 0, -ENOMEM,
					    "out of memory");
	while (*p != '"') {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20) {
			free(out);
			return jr_fail(r, p, "a control character inside a string (escape it)");
		}
		if (c == '\\') {
			unsigned cp, lo;

			switch (p[1]) {
			case '"': *o++ = '"'; p += 2; continue;
			case '\\': *o++ = '\\'; p += 2; continue;
			case '/': *o++ = '/'; p += 2; continue;
			case 'b': *o++ = '\b'; p += 2; continue;
			case 'f': *o++ = '\f'; p += 2; continue;
			case 'n': *o++ = '\n'; p += 2; continue;
			case 'r': *o++ = '\r'; p += 2; continue;
			case 't': *o++ = '\t'; p += 2; continue;
			case 'u':
				if (r->end - p < 6 || jr_hex4(p + 2, &cp))
					break;
				if (cp >= 0xdc00 && cp <= 0xdfff)
					break;
				if (cp >= 0xd800 && cp <= 0xdbff) {
					/* a high surrogate needs its low one: \uD83D\uDE00 */
					if (r->end - p < 12 || p[6] != '\\' || p[7] != 'u' ||
					    jr_hex4(p + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
						break;
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
				o += put_utf8(o, cp);
				p += 6;
				continue;
			default:
				break;
			}
			free(out);
			return jr_fail(r, p, "a bad escape in a string");
		}
		size_t n = utf8_len((const unsigned char *)p, (const unsigned char *)q);
		if (!n) {
			free(out);
			return jr_fail(r, p, "a string holds bytes that are not UTF-8");
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	*str = out;
	*len = (size_t)(o - out);
	r->s = p + 1;
	return 0;
}

static bool is_digit(const char *p, const char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

static int jr_number(struct jr *r, struct tc_jv *v)
{
	const char *p = r->s, *start = r->s;
	char buf[64], *copy, *endp;
	size_t n;

	v->type = TC_JV_NUMBER;
	v->integer = true;
	if (p < r->end && *p == '-')
		p++;
	if (!is_digit(p, r->end))
		return jr_fail(r, start, "a number needs a digit");
	if (*p == '0')
		p++;
	else
		while (is_digit(p, r->end))
			p++;
	if (p < r->end && *p == '.') {
		v->integer = false;
		if (!is_digit(++p, r->end))
			return jr_fail(r, p, "a digit must follow the decimal point");
		while (is_digit(p, r->end))
			p++;
	}
	if (p < r->end && (*p == 'e' || *p == 'E')) {
		v->integer = false;
		p++;
		if (p < r->end && (*p == '+' || *p == '-'))
			p++;
		if (!is_digit(p, r->end))
			return jr_fail(r, p, "an exponent needs a digit");
		while (is_digit(p, r->end))
			p++;
	}
	/* the text is not NUL-terminated where it ends: strtod reads a copy */
	n = (size_t)(p - start);
	copy = n < sizeof(buf) ? buf : malloc(n + 1);
	if (!copy)
		return r->err = tc_diag_set(r->diag, r->source, r->line, 0, -ENOMEM,
					    "out of memory");
	memcpy(copy, start, n);
	copy[n] = '\0';
	errno = 0;
	v->number = strtod(copy, &endp);
	if (copy != buf)
		free(copy);
	if (errno == ERANGE && (v->number > 1 || v->number < -1))
		return jr_fail(r, start, "a number too large for a double");
	r->s = p;
	return 0;
}

static int jr_word(struct jr *r, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->s) < n || memcmp(r->s, word, n))
		return jr_fail(r, r->s, "not a JSON value");
	r->s += n;
	return 0;
}

static int jr_array(struct jr *r, struct tc_jv *v, int depth)
{
	size_t cap = 0;

	v->type = TC_JV_ARRAY;
	r->s++;
	jr_space(r);
	if (r->s < r->end && *r->s == ']') {
		r->s++;
		return 0;
	}
	for (;;) {
		struct tc_jv *item = jr_push(r, v, &cap);

		if (!item || jr_value(r, item, depth + 1))
			return r->err;
		jr_space(r);
		if (r->s < r->end && *r->s == ',') {
			r->s++;
			continue;
		}
		if (r->s < r->end && *r->s == ']') {
			r->s++;
			return 0;
		}
		return jr_fail(r, r->s, "expected ',' or ']' in an array");
	}
}

static int jr_object(struct jr *r, struct tc_jv *v, int depth)
{
	size_t cap = 0;

	v->type = TC_JV_OBJECT;
	r->s++;
	jr_space(r);
	if (r->s < r->end && *r->s == '}') {
		r->s++;
		return 0;
	}
	for (;;) {
		struct tc_jv *item;
		const char *at;
		char *key;
		size_t klen;

		jr_space(r);
		at = r->s;
		if (r->s >= r->end || *r->s != '"')
			return jr_fail(r, r->s, "expected a member's name in quotes");
		if (jr_string(r, &key, &klen))
			return r->err;
		/* a name is compared as a C string: one with \u0000 inside is refused */
		if (strlen(key) != klen) {
			free(key);
			return jr_fail(r, at, "a member's name holds \\u0000");
		}
		for (size_t i = 0; i < v->n; i++)
			if (!strcmp(v->items[i].key, key)) {
				free(key);
				return jr_fail(r, at, "a member's name appears twice in an object");
			}
		item = jr_push(r, v, &cap);
		if (!item) {
			free(key);
			return r->err;
		}
		item->key = key;
		jr_space(r);
		if (r->s >= r->end || *r->s != ':')
			return jr_fail(r, r->s, "expected ':' after a member's name");
		r->s++;
		if (jr_value(r, item, depth + 1))
			return r->err;
		jr_space(r);
		if (r->s < r->end && *r->s == ',') {
			r->s++;
			continue;
		}
		if (r->s < r->end && *r->s == '}') {
			r->s++;
			return 0;
		}
		return jr_fail(r, r->s, "expected ',' or '}' in an object");
	}
}

static int jr_value(struct jr *r, struct tc_jv *v, int depth)
{
	jr_space(r);
	v->line = r->line;
	v->column = jr_col(r, r->s);
	if (depth > JR_MAX_DEPTH)
		return jr_fail(r, r->s, "nested more than 128 levels deep");
	if (r->s >= r->end)
		return jr_fail(r, r->s, "the text ends where a value should be");
	switch (*r->s) {
	case '{':
		return jr_object(r, v, depth);
	case '[':
		return jr_array(r, v, depth);
	case '"':
		v->type = TC_JV_STRING;
		return jr_string(r, &v->str, &v->len);
	case 't':
		v->type = TC_JV_BOOL;
		v->boolean = true;
		return jr_word(r, "true");
	case 'f':
		v->type = TC_JV_BOOL;
		return jr_word(r, "false");
	case 'n':
		v->type = TC_JV_NULL;
		return jr_word(r, "null");
	default:
		if (*r->s != '-' && (*r->s < '0' || *r->s > '9'))
			return jr_fail(r, r->s, "not a JSON value");
		return jr_number(r, v);
	}
}

static void jv_exit(struct tc_jv *v)
{
	for (size_t i = 0; i < v->n; i++)
		jv_exit(&v->items[i]);
	free(v->items);
	free(v->str);
	free(v->key);
}

void tc_jv_free(struct tc_jv *v)
{
	if (!v)
		return;
	jv_exit(v);
	free(v);
}

int tc_json_read(const char *text, size_t len, const char *source, struct tc_jv **out,
		 struct tacho_diag *diag)
{
	struct jr r = { .s = text, .end = text + len, .source = source, .line_start = text,
			.line = 1, .diag = diag };
	struct tc_jv *v = calloc(1, sizeof(*v));

	*out = NULL;
	if (!v)
		return tc_diag_set(diag, source, 0, 0, -ENOMEM, "out of memory");
	if (jr_value(&r, v, 0) == 0) {
		jr_space(&r);
		if (r.s < r.end)
			jr_fail(&r, r.s, "more text after the JSON value");
	}
	if (r.err) {
		tc_jv_free(v);
		return r.err;
	}
	*out = v;
	return 0;
}

const struct tc_jv *tc_jv_get(const struct tc_jv *obj, const char *key)
{
	if (!obj || obj->type != TC_JV_OBJECT)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->items[i].key, key))
			return &obj->items[i];
	return NULL;
}
