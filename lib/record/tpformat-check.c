/* tpformat-check.c - a tracepoint format text checked against the grammar the kernel writes
 * (kernel/trace/trace_events.c, f_show) before libtraceevent parses it: what a file
 * carries there may be any bytes, and libtraceevent 1.7 crashes on some of them. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/tpformat-check.h"
#include "tacho/errors.h"

#define MAX_LINE   4096u   /* a name, or a field line */
#define MAX_DEPTH  32u     /* (), [] and {} nested */
#define MAX_DIGITS 10u

struct cur {
	const char *s;
	size_t len, pos;
	char *why;
	size_t why_size;
};

static int refuse(struct cur *c, const char *fmt, ...)
{
	va_list ap;

	if (c->why && c->why_size) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->why_size, fmt, ap);
		va_end(ap);
	}
	return -TACHO_EPARSE;
}

static bool lit(struct cur *c, const char *w)
{
	size_t n = strlen(w);

	if (c->len - c->pos < n || memcmp(c->s + c->pos, w, n))
		return false;
	c->pos += n;
	return true;
}

static bool digits(struct cur *c)
{
	size_t n = 0;

	if (c->pos < c->len && c->s[c->pos] == '-')
		c->pos++;
	while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9' && n <= MAX_DIGITS) {
		c->pos++;
		n++;
	}
	return n && n <= MAX_DIGITS;
}

/* Bytes up to (not past) `stop` or a newline, none of them a tab or a control byte:
 * how many, or 0 when there are none or too many. */
static size_t text_until(struct cur *c, char stop)
{
	size_t n = 0;

	while (c->pos + n < c->len && c->s[c->pos + n] != stop && c->s[c->pos + n] != '\n') {
		unsigned char ch = (unsigned char)c->s[c->pos + n];
		if (ch < 0x20 || ch > 0x7e || ++n > MAX_LINE)
			return 0;
	}
	c->pos += n;
	return n;
}

static int header(struct cur *c)
{
	if (!lit(c, "name: ") || !text_until(c, '\n') || !lit(c, "\n"))
		return refuse(c, "no \"name: NAME\" line first");
	if (!lit(c, "ID: ") || !digits(c) || !lit(c, "\n"))
		return refuse(c, "no \"ID: NUMBER\" line after the name");
	if (!lit(c, "format:\n"))
		return refuse(c, "no \"format:\" line after the ID");
	return 0;
}

/* "\tfield:TYPE NAME;\toffset:N;\tsize:N;[\tsigned:N;]\n" and blank lines, up to the
 * print format. */
static int fields(struct cur *c)
{
	for (unsigned line = 1;; line++) {
		if (lit(c, "\n"))
			continue;
		if (lit(c, "print fmt: "))
			return 0;
		if (!lit(c, "\tfield:") || !text_until(c, ';') || !lit(c, ";"))
			return refuse(c, "field line %u is not \"\\tfield:TYPE NAME;\"", line);
		if (!lit(c, "\toffset:") || !digits(c) || !lit(c, ";") ||
		    !lit(c, "\tsize:") || !digits(c) || !lit(c, ";"))
			return refuse(c, "field line %u has no \"offset:N;\" and \"size:N;\"", line);
		if (lit(c, "\tsigned:") && (!digits(c) || !lit(c, ";")))
			return refuse(c, "field line %u has a bad \"signed:N;\"", line);
		if (!lit(c, "\n"))
			return refuse(c, "field line %u does not end after its size and sign", line);
	}
}

/* --- the print format's arguments, in libtraceevent's tokens --- */

enum tok_kind { T_ITEM, T_STR, T_DELIM, T_OP };

struct tok {
	enum tok_kind kind;
	char s[4];   /* a delimiter's or an operator's text */
};

struct toks {
	struct tok *t;
	size_t n;
};

static bool is_item(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

/* A string or character literal from its opening quote: false when it does not
 * close. */
static bool quoted(const char *s, size_t len, size_t *i)
{
	char q = s[(*i)++];

	while (*i < len) {
		if (s[*i] == '\\') {
			if (*i + 1 >= len)
				return false;
			*i += 2;
			continue;
		}
		if (s[(*i)++] == q)
			return true;
	}
	return false;
}

/* An operator as libtraceevent's tokenizer cuts it: "->", a doubled + | & < >, "<<="
 * and ">>=", a '=' after + | & < > ! =, else one character. */
static size_t op_len(const char *s, size_t len, size_t i)
{
	char ch = s[i], nx = i + 1 < len ? s[i + 1] : 0;

	if (ch == '-')
		return nx == '>' ? 2 : 1;
	if (strchr("+|&<>", ch) && nx == ch)
		return (ch == '<' || ch == '>') && i + 2 < len && s[i + 2] == '=' ? 3 : 2;
	if (strchr("+|&<>!=", ch) && nx == '=')
		return 2;
	return 1;
}

static int tokenize(struct cur *c, const char *s, size_t len, struct toks *out)
{
	char close[MAX_DEPTH];
	size_t depth = 0;

	for (size_t i = 0; i < len;) {
		struct tok t = { 0 };
		char ch = s[i];
		size_t start = i;

		if (ch == ' ' || ch == '\t' || ch == '\n') {
			i++;
			continue;
		}
		if (ch == '"' || ch == '\'') {
			if (!quoted(s, len, &i))
				return refuse(c, "the print format has a quote at its byte %zu "
					      "that does not close", start);
			t.kind = T_STR;
		} else if (is_item(ch)) {
			while (i < len && is_item(s[i]))
				i++;
			t.kind = T_ITEM;
		} else if (ch == '(' || ch == ')' || ch == ',') {
			t.kind = T_DELIM;
			t.s[0] = ch;
			i++;
		} else {
			/* any other character: libtraceevent refuses the operators it does
			 * not know, safely, except at the places args() checks */
			size_t n = op_len(s, len, i);
			t.kind = T_OP;
			memcpy(t.s, s + i, n);
			i += n;
		}
		if (t.s[0] == '(' || t.s[0] == '[' || t.s[0] == '{') {
			if (depth == MAX_DEPTH)
				return refuse(c, "the print format nests more than %u deep at its "
					      "byte %zu", MAX_DEPTH, start);
			close[depth++] = t.s[0] == '(' ? ')' : t.s[0] == '[' ? ']' : '}';
		} else if (t.s[0] == ')' || t.s[0] == ']' || t.s[0] == '}') {
			if (!depth || close[depth - 1] != t.s[0])
				return refuse(c, "the print format's '%c' at its byte %zu closes "
					      "nothing open", t.s[0], start);
			depth--;
		}
		out->t[out->n++] = t;
	}
	if (depth)
		return refuse(c, "the print format leaves a '%c' unclosed", close[depth - 1]);
	return 0;
}

static bool is(const struct toks *k, size_t i, const char *s)
{
	return i < k->n && (k->t[i].kind == T_OP || k->t[i].kind == T_DELIM) &&
	       !strcmp(k->t[i].s, s);
}

/* Past the bracket that opens at i, to the token after its match. */
static size_t skip_group(const struct toks *k, size_t i)
{
	size_t depth = 0;

	for (; i < k->n; i++) {
		const char *s = k->t[i].s;
		if (k->t[i].kind == T_STR || k->t[i].kind == T_ITEM)
			continue;
		if (!strcmp(s, "(") || !strcmp(s, "[") || !strcmp(s, "{"))
			depth++;
		else if ((!strcmp(s, ")") || !strcmp(s, "]") || !strcmp(s, "}")) && !--depth)
			return i + 1;
	}
	return k->n;
}

/* Past one operand as libtraceevent's process_arg takes it: unary operators, a
 * parenthesized group (and, a cast, the operand after it), a name (with its call's
 * arguments, or REC->field), adjacent strings. */
static size_t skip_primary(const struct toks *k, size_t i)
{
	while (i < k->n) {
		const struct tok *t = &k->t[i];
		if (t->kind == T_STR) {
			while (i < k->n && k->t[i].kind == T_STR)
				i++;
			return i;
		}
		if (t->kind == T_ITEM) {
			i++;
			if (is(k, i, "("))
				return skip_group(k, i);
			if (is(k, i, "->") && i + 1 < k->n && k->t[i + 1].kind == T_ITEM)
				return i + 2;
			return i;
		}
		if (is(k, i, "(")) {
			i = skip_group(k, i);
			if (i < k->n && (k->t[i].kind == T_ITEM || k->t[i].kind == T_STR ||
					 is(k, i, "(")))
				continue;   /* a cast: its operand follows */
			return i;
		}
		if (is(k, i, "~") || is(k, i, "!") || is(k, i, "+") || is(k, i, "-")) {
			i++;
			continue;
		}
		return i;
	}
	return i;
}

/* The tokens libtraceevent accepts after a subscript or a conditional's last operand
 * (those its get_op_prio ranks above 0; ':' and the delimiters end the operand). */
static bool tail_ok(const struct toks *k, size_t i)
{
	static const char *const ok[] = {
		",", ")", ":", "~", "!", "*", "/", "%", "+", "-", "<", ">", "&", "^", "|",
		"?", "++", "--", ">>", "<<", ">=", "<=", "==", "!=", "&&", "||",
	};

	if (i >= k->n)
		return true;
	for (size_t j = 0; j < sizeof(ok) / sizeof(*ok); j++)
		if (is(k, i, ok[j]))
			return true;
	return false;
}

static const char *tok_text(const struct tok *t)
{
	return t->kind == T_ITEM ? "a name" : t->kind == T_STR ? "a string" : t->s;
}

static int args(struct cur *c, const struct toks *k)
{
	unsigned pending[MAX_DEPTH + 1] = { 0 };   /* '?' waiting for their ':', per depth */
	size_t depth = 0;

	if (!k->n || k->t[0].kind != T_STR || k->t[0].s[0])
		return refuse(c, "the print format does not start with a string");
	for (size_t i = 0; i < k->n; i++) {
		const char *s = k->t[i].s;
		if (k->t[i].kind == T_ITEM || k->t[i].kind == T_STR)
			continue;
		if (!strcmp(s, "(") || !strcmp(s, "[") || !strcmp(s, "{")) {
			pending[++depth] = 0;   /* tokenize bounded the depth */
		} else if (!strcmp(s, ")") || !strcmp(s, "]") || !strcmp(s, "}")) {
			depth--;
			/* "[]" fails in libtraceevent before the tail matters (the
			 * kernel writes it: "static const char *s[] = {...}") */
			if (!strcmp(s, "]") && !is(k, i - 1, "[") && !tail_ok(k, i + 1))
				return refuse(c, "the print format has \"%s\" after a subscript",
					      tok_text(&k->t[i + 1]));
		} else if (!strcmp(s, "?")) {
			pending[depth]++;
		} else if (!strcmp(s, ":")) {
			size_t end;
			if (!pending[depth])
				return refuse(c, "the print format has a ':' without its '?'");
			pending[depth]--;
			end = skip_primary(k, i + 1);
			if (!tail_ok(k, end))
				return refuse(c, "the print format has \"%s\" after a conditional",
					      tok_text(&k->t[end]));
		}
	}
	return 0;
}

/* The rest of the text: a string literal (which may hold newlines: ext4_fc_stats's does)
 * and its arguments. */
static int print_fmt(struct cur *c)
{
	const char *s = c->s + c->pos;
	size_t n = c->len - c->pos;
	struct toks k = { NULL, 0 };
	int err;

	while (n && s[n - 1] == '\n')
		n--;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\n') ||
		    (unsigned char)s[i] > 0x7e)
			return refuse(c, "the print format has byte 0x%02x at its byte %zu",
				      (unsigned char)s[i], i);
	/* a token is a byte at least */
	k.t = malloc((n + 1) * sizeof(*k.t));
	if (!k.t)
		return -ENOMEM;
	err = tokenize(c, s, n, &k);
	if (!err)
		err = args(c, &k);
	free(k.t);
	return err;
}

int tc_tpformat_check(const char *text, size_t len, char *why, size_t why_size)
{
	struct cur c = { text, len, 0, why, why_size };
	int err;

	while (c.len && !text[c.len - 1])
		c.len--;
	if (c.len > TC_TPFORMAT_MAX)
		return refuse(&c, "%zu bytes, more than %u", c.len, TC_TPFORMAT_MAX);
	if (memchr(text, 0, c.len))
		return refuse(&c, "a NUL byte inside the text");
	err = header(&c);
	if (!err)
		err = fields(&c);
	return err ? err : print_fmt(&c);
}
