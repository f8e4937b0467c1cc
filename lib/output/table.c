/* table.c - aligned text tables for the human-readable reports. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util/util.h"

struct tc_table {
	unsigned ncols;
	size_t nrows, alloc;
	char **cells;      /* nrows * ncols */
	bool *right;
};

struct tc_table *tc_table_new(unsigned ncols)
{
	struct tc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ncols = ncols ? ncols : 1;
	t->right = calloc(t->ncols, sizeof(*t->right));
	if (!t->right) {
		free(t);
		return NULL;
	}
	return t;
}

void tc_table_free(struct tc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->right);
	free(t);
}

void tc_table_align_right(struct tc_table *t, unsigned col, bool right)
{
	if (col < t->ncols)
		t->right[col] = right;
}

int tc_table_add(struct tc_table *t, const char *const *cells)
{
	if (t->nrows == t->alloc) {
		size_t n = t->alloc ? t->alloc * 2 : 16;
		char **p = realloc(t->cells, n * t->ncols * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->cells = p;
		t->alloc = n;
	}
	for (unsigned c = 0; c < t->ncols; c++) {
		/* a cell may hold a name from outside (a symbol, a binary's path, an
		 * event): shown, never acted upon by the terminal */
		struct tc_sb sb = TC_SB_INIT;
		char *s;
		tc_sb_init(&sb);
		tc_sb_add_printable(&sb, cells[c] ? cells[c] : "");
		s = tc_sb_detach(&sb);
		if (!s) {
			for (unsigned k = 0; k < c; k++)
				free(t->cells[t->nrows * t->ncols + k]);
			return -ENOMEM;
		}
		t->cells[t->nrows * t->ncols + c] = s;
	}
	t->nrows++;
	return 0;
}

int tc_table_addf(struct tc_table *t, const char *fmt, ...)
{
	const char **cells;
	char *line, *p;
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	cells = calloc(t->ncols, sizeof(*cells));
	if (!cells) {
		free(line);
		return -ENOMEM;
	}
	p = line;
	for (unsigned c = 0; c < t->ncols && p; c++) {
		char *tab = (c + 1 < t->ncols) ? strchr(p, '\t') : NULL;
		if (tab)
			*tab = '\0';
		cells[c] = p;
		p = tab ? tab + 1 : NULL;
	}
	err = tc_table_add(t, cells);
	free(cells);
	free(line);
	return err;
}

/* Display width of UTF-8 text: count code points, not bytes ("µs", "°"). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void tc_table_print(const struct tc_table *t, FILE *f, unsigned indent, unsigned gap)
{
	size_t *w = calloc(t->ncols, sizeof(*w));

	if (!w)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (unsigned c = 0; c < t->ncols; c++) {
			size_t n = width(t->cells[r * t->ncols + c]);
			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		unsigned last = t->ncols;
		/* trailing empty cells print nothing, so lines carry no trailing blanks */
		while (last > 1 && !t->cells[r * t->ncols + last - 1][0])
			last--;
		fprintf(f, "%*s", (int)indent, "");
		for (unsigned c = 0; c < last; c++) {
			const char *s = t->cells[r * t->ncols + c];
			int pad = (int)(w[c] - width(s));
			if (c)
				fprintf(f, "%*s", (int)gap, "");
			if (t->right[c])
				fprintf(f, "%*s%s", pad, "", s);
			else if (c + 1 < last)
				fprintf(f, "%s%*s", s, pad, "");
			else
				fputs(s, f);
		}
		fputc('\n', f);
	}
	free(w);
}
