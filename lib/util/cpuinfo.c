/* cpuinfo.c - /proc/cpuinfo, the one reader: the file itself, a field of its first
 * processor's block, and a flag among that block's "flags". The finders are pure
 * functions of (text, length), so that tests and the fuzz target reach every path. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

/* Larger than any machine's file: ~1.5 KiB per CPU. */
#define CPUINFO_MAX (64u << 20)

int tc_cpuinfo_read(const char *root, char **text, size_t *len)
{
	char path[PATH_MAX];
	int n;

	if (!root || !strcmp(root, "/"))
		root = "";
	n = snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return tc_read_file(path, text, len, CPUINFO_MAX);
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The value of "KEY<blanks>:<blanks>VALUE<blanks>" in the first processor's block:
 * where it starts and how long it is, without the blanks around it. */
static bool field_span(const char *text, size_t len, const char *key, const char **val,
		       size_t *vlen)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;

	if (!text)
		return false;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q, *e;

		if (!eol)
			eol = end;
		/* a blank line ends the first processor's block */
		if (eol == p && p != text)
			return false;
		if ((size_t)(eol - p) > klen && memcmp(p, key, klen) == 0) {
			q = p + klen;
			while (q < eol && blank(*q))
				q++;
			if (q < eol && *q == ':') {
				q++;
				while (q < eol && blank(*q))
					q++;
				e = eol;
				while (e > q && (blank(e[-1]) || e[-1] == '\r'))
					e--;
				*val = q;
				*vlen = (size_t)(e - q);
				return true;
			}
		}
		p = eol + 1;
	}
	return false;
}

char *tc_cpuinfo_field(const char *text, size_t len, const char *key)
{
	const char *v;
	size_t n;

	return field_span(text, len, key, &v, &n) ? tc_strndup(v, n) : NULL;
}

/* Whether word is one of the blank-separated words of list[0..len). */
static bool word_in(const char *list, size_t len, const char *word)
{
	size_t n = strlen(word);
	const char *p = list, *end = list + len;

	if (!n)
		return false;
	while (p < end) {
		const char *w;

		while (p < end && blank(*p))
			p++;
		w = p;
		while (p < end && !blank(*p))
			p++;
		if ((size_t)(p - w) == n && !memcmp(w, word, n))
			return true;
	}
	return false;
}

bool tc_cpuinfo_has_flag(const char *text, size_t len, const char *flag)
{
	const char *v;
	size_t n;

	return field_span(text, len, "flags", &v, &n) && word_in(v, n, flag);
}

bool tc_cpuinfo_flags_has(const char *flags, const char *flag)
{
	return flags && word_in(flags, strlen(flags), flag);
}
