/* json-check.c - a strict, small JSON reader for the end-to-end tests (RFC 8259). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json-check.h"

struct parser {
	const char *s, *p;
	char *err;
	size_t errsize;
	bool failed;
	int depth;
};

static void perr(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct parser *ps, const char *fmt, ...)
{
	unsigned line = 1, col = 1;
	va_list ap;
	int n;

	if (ps->failed)
		return;
	ps->failed = true;
	for (const char *q = ps->s; q < ps->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	n = snprintf(ps->err, ps->errsize, "line %u, column %u: ", line, col);
	if (n < 0 || (size_t)n >= ps->errsize)
		return;
	va_start(ap, fmt);
	vsnprintf(ps->err + n, ps->errsize - (size_t)n, fmt, ap);
	va_end(ap);
}

static void ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static struct th_json *node(enum th_json_type t)
{
	struct th_json *j = calloc(1, sizeof(*j));

	if (!j)
		abort();
	j->type = t;
	return j;
}

static void add(struct th_json *parent, struct th_json *child)
{
	parent->items = realloc(parent->items, (parent->n + 1) * sizeof(*parent->items));
	if (!parent->items)
		abort();
	parent->items[parent->n++] = child;
}

static void put_utf8(char **o, unsigned cp)
{
	char *q = *o;

	if (cp < 0x80) {
		*q++ = (char)cp;
	} else if (cp < 0x800) {
		*q++ = (char)(0xc0 | (cp >> 6));
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*q++ = (char)(0xe0 | (cp >> 12));
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*q++ = (char)(0xf0 | (cp >> 18));
		*q++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = q;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		int c = (unsigned char)p[i];
		if (!isxdigit(c))
			return -1;
		v = v * 16 + (unsigned)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
	}
	*out = v;
	return 0;
}

static char *parse_string(struct parser *ps)
{
	const char *p = ps->p + 1;   /* after the quote */
	const char *q = p;
	char *out, *o;

	/* the decoded string is never longer than its text, up to the closing quote (not
	 * the rest of the document: a buffer of that for each string made the parse of a
	 * 400 KB document take seconds, most of it in mmap and page faults) */
	while (*q && *q != '"')
		q += *q == '\\' && q[1] ? 2 : 1;
	out = malloc((size_t)(q - p) + 1);
	o = out;

	if (!out)
		abort();
	for (;;) {
		unsigned char c = (unsigned char)*p;
		if (c == '"') {
			p++;
			break;
		}
		if (c == '\0') {
			ps->p = p;
			perr(ps, "unterminated string");
			free(out);
			return NULL;
		}
		if (c < 0x20) {
			ps->p = p;
			perr(ps, "control character 0x%02x in a string", c);
			free(out);
			return NULL;
		}
		if (c != '\\') {
			*o++ = (char)c;
			p++;
			continue;
		}
		p++;
		switch (*p) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (hex4(p + 1, &cp)) {
				ps->p = p;
				perr(ps, "bad \\u escape");
				free(out);
				return NULL;
			}
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && p[1] == '\\' && p[2] == 'u' &&
			    hex4(p + 3, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			put_utf8(&o, cp);
			break;
		}
		default:
			ps->p = p;
			perr(ps, "bad escape '\\%c'", *p ? *p : '0');
			free(out);
			return NULL;
		}
		p++;
	}
	*o = '\0';
	ps->p = p;
	return out;
}

static struct th_json *parse_value(struct parser *ps);

static struct th_json *parse_number(struct parser *ps)
{
	const char *p = ps->p;
	struct th_json *j;
	bool integer = true;

	/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
	if (*p == '-')
		p++;
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		while (isdigit((unsigned char)*p))
			p++;
	} else {
		perr(ps, "bad number");
		return NULL;
	}
	if (*p == '.') {
		integer = false;
		p++;
		if (!isdigit((unsigned char)*p)) {
			ps->p = p;
			perr(ps, "digits must follow the decimal point");
			return NULL;
		}
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		integer = false;
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p)) {
			ps->p = p;
			perr(ps, "digits must follow the exponent");
			return NULL;
		}
		while (isdigit((unsigned char)*p))
			p++;
	}
	j = node(TH_JSON_NUMBER);
	j->number = strtod(ps->p, NULL);
	j->integer = integer;
	ps->p = p;
	return j;
}

static struct th_json *parse_container(struct parser *ps, bool object)
{
	struct th_json *j = node(object ? TH_JSON_OBJECT : TH_JSON_ARRAY);
	char close = object ? '}' : ']';

	/* as deep as the library's writer may nest (TC_JSON_MAX_DEPTH): a call tree of
	 * 127-frame chains (report -g) is about 260 deep */
	if (++ps->depth > 1040) {
		perr(ps, "nested too deeply");
		th_json_free(j);
		return NULL;
	}
	ps->p++;
	ws(ps);
	if (*ps->p == close) {
		ps->p++;
		ps->depth--;
		return j;
	}
	for (;;) {
		char *key = NULL;
		struct th_json *v;

		ws(ps);
		if (object) {
			if (*ps->p != '"') {
				perr(ps, "expected a member name");
				break;
			}
			key = parse_string(ps);
			if (!key)
				break;
			for (size_t i = 0; i < j->n; i++)
				if (!strcmp(j->items[i]->key, key)) {
					perr(ps, "duplicate member \"%s\"", key);
					break;
				}
			if (ps->failed) {
				free(key);
				break;
			}
			ws(ps);
			if (*ps->p != ':') {
				perr(ps, "expected ':'");
				free(key);
				break;
			}
			ps->p++;
		}
		v = parse_value(ps);
		if (!v) {
			free(key);
			break;
		}
		v->key = key;
		add(j, v);
		ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			ps->depth--;
			return j;
		}
		perr(ps, "expected ',' or '%c'", close);
		break;
	}
	th_json_free(j);
	return NULL;
}

static struct th_json *parse_value(struct parser *ps)
{
	struct th_json *j;

	ws(ps);
	switch (*ps->p) {
	case '{': return parse_container(ps, true);
	case '[': return parse_container(ps, false);
	case '"': {
		char *s = parse_string(ps);
		if (!s)
			return NULL;
		j = node(TH_JSON_STRING);
		j->string = s;
		return j;
	}
	case 't':
	case 'f':
	case 'n': {
		static const struct { const char *word; enum th_json_type t; bool b; } lits[] = {
			{ "true", TH_JSON_BOOL, true },
			{ "false", TH_JSON_BOOL, false },
			{ "null", TH_JSON_NULL, false },
		};
		for (size_t i = 0; i < 3; i++) {
			size_t n = strlen(lits[i].word);
			if (!strncmp(ps->p, lits[i].word, n)) {
				ps->p += n;
				j = node(lits[i].t);
				j->boolean = lits[i].b;
				return j;
			}
		}
		perr(ps, "unknown word");
		return NULL;
	}
	default:
		if (*ps->p == '-' || isdigit((unsigned char)*ps->p))
			return parse_number(ps);
		if (*ps->p == '\0')
			perr(ps, "the text ends where a value should be");
		else
			perr(ps, "unexpected character '%c'", *ps->p);
		return NULL;
	}
}

struct th_json *th_json_parse(const char *text, char *err, size_t errsize)
{
	struct parser ps = { .s = text, .p = text, .err = err, .errsize = errsize };
	struct th_json *j;

	if (errsize)
		err[0] = '\0';
	j = parse_value(&ps);
	if (!j)
		return NULL;
	ws(&ps);
	if (*ps.p != '\0') {
		perr(&ps, "text after the value");
		th_json_free(j);
		return NULL;
	}
	return j;
}

void th_json_free(struct th_json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		th_json_free(j->items[i]);
	free(j->items);
	free(j->string);
	free(j->key);
	free(j);
}

const struct th_json *th_json_get(const struct th_json *j, const char *path)
{
	const char *p = path;

	while (j && *p) {
		if (*p == '.') {
			p++;
			continue;
		}
		if (*p == '[') {
			char *end;
			unsigned long i = strtoul(p + 1, &end, 10);
			if (*end != ']' || j->type != TH_JSON_ARRAY || i >= j->n)
				return NULL;
			j = j->items[i];
			p = end + 1;
			continue;
		}
		size_t n = strcspn(p, ".[");
		const struct th_json *found = NULL;
		if (j->type != TH_JSON_OBJECT)
			return NULL;
		for (size_t i = 0; i < j->n && !found; i++)
			if (strlen(j->items[i]->key) == n && !strncmp(j->items[i]->key, p, n))
				found = j->items[i];
		j = found;
		p += n;
	}
	return j;
}

struct th_json *th_json_parse_or_fail(const char *text, const char *file, int line)
{
	char err[256];
	struct th_json *j = th_json_parse(text, err, sizeof(err));

	if (!j) {
		print_error("%s:%d: not valid JSON: %s\n%s\n", file, line, err, text);
		fail();
	}
	return j;
}

static const char *const type_names[] = { "null", "boolean", "number", "string", "array", "object" };

void th_json_expect_type(const struct th_json *j, const char *path, enum th_json_type t,
			 const char *file, int line)
{
	const struct th_json *v = th_json_get(j, path);

	if (!v) {
		print_error("%s:%d: JSON has no \"%s\"\n", file, line, path);
		fail();
	}
	if (v->type != t) {
		print_error("%s:%d: JSON \"%s\" is a %s, want a %s\n", file, line, path,
			    type_names[v->type], type_names[t]);
		fail();
	}
}

void th_json_expect_int(const struct th_json *j, const char *path, long long want,
			const char *file, int line)
{
	const struct th_json *v = th_json_get(j, path);

	th_json_expect_type(j, path, TH_JSON_NUMBER, file, line);
	if (!v->integer || v->number != (double)want) {
		print_error("%s:%d: JSON \"%s\" is %.17g, want %lld\n", file, line, path, v->number,
			    want);
		fail();
	}
}

void th_json_expect_str(const struct th_json *j, const char *path, const char *want,
			const char *file, int line)
{
	const struct th_json *v = th_json_get(j, path);

	th_json_expect_type(j, path, TH_JSON_STRING, file, line);
	if (strcmp(v->string, want) != 0) {
		print_error("%s:%d: JSON \"%s\" is \"%s\", want \"%s\"\n", file, line, path,
			    v->string, want);
		fail();
	}
}

double th_json_num_or_fail(const struct th_json *j, const char *path, const char *file,
			   int line)
{
	th_json_expect_type(j, path, TH_JSON_NUMBER, file, line);
	return th_json_get(j, path)->number;
}

const char *th_json_str_or_fail(const struct th_json *j, const char *path, const char *file,
				int line)
{
	th_json_expect_type(j, path, TH_JSON_STRING, file, line);
	return th_json_get(j, path)->string;
}

const struct th_json *th_json_find(const struct th_json *j, const char *path,
				   const char *member, const char *value)
{
	const struct th_json *a = th_json_get(j, path);

	if (!a || a->type != TH_JSON_ARRAY)
		return NULL;
	for (size_t i = 0; i < a->n; i++) {
		const struct th_json *m = th_json_get(a->items[i], member);
		if (m && m->type == TH_JSON_STRING && !strcmp(m->string, value))
			return a->items[i];
	}
	return NULL;
}

const struct th_json *th_json_named_or_fail(const struct th_json *j, const char *path,
					    const char *name, const char *file, int line)
{
	const struct th_json *e = th_json_find(j, path, "name", name);

	if (!e) {
		print_error("%s:%d: JSON \"%s\" has no entry named \"%s\"\n", file, line, path,
			    name);
		fail();
	}
	return e;
}

struct th_json *th_stat_json_at(const char *file, int line, struct th_run *r,
				const char *first, ...)
{
	const char *argv[64];
	size_t n = 0;
	va_list ap;

	argv[n++] = th_tacho_bin();
	argv[n++] = "stat";
	argv[n++] = "--json";
	argv[n++] = first;
	va_start(ap, first);
	while (n < 63 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	th_runv(r, NULL, (char *const *)argv);
	return th_json_parse_or_fail(r->err, file, line);
}
