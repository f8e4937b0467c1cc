/* top-view.c - tacho top's screen with ncurses: a title with what is counted and what
 * is not, a row per target with each event's rate and a sparkline of its history (the
 * oscilloscope of PMON and PTACH), and for the selected row a larger time plot of every
 * event. UTF-8 block characters where the locale has them, ASCII otherwise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "top-curses.h"
#include "top.h"

/* Eighths of a cell, low to high: U+2581 .. U+2588. */
static const char *const blocks[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
				      "\u2586", "\u2587", "\u2588" };
static const char ascii_levels[] = " _.-:=+*#";

char *top_sparkline(const double *v, size_t n, size_t width, bool ascii, char *buf, size_t size)
{
	size_t o = 0, from = n > width ? n - width : 0;
	double max = 0;

	for (size_t i = from; i < n; i++)
		if (isfinite(v[i]) && v[i] > max)
			max = v[i];
	buf[0] = '\0';
	for (size_t i = from; i < n; i++) {
		int lvl = 0;
		const char *c;
		size_t cl;

		if (isfinite(v[i]) && max > 0)
			lvl = (int)lround(v[i] / max * 8);
		/* a value above zero shows, however small beside the largest */
		if (isfinite(v[i]) && v[i] > 0 && lvl == 0)
			lvl = 1;
		if (ascii) {
			c = &ascii_levels[lvl];
			cl = 1;
		} else {
			c = blocks[lvl];
			cl = strlen(c);
		}
		if (o + cl + 1 > size)
			break;
		memcpy(buf + o, c, cl);
		o += cl;
	}
	buf[o] = '\0';
	return buf;
}

static bool shown(const struct top_ui *ui, const struct tacho_live_row *r)
{
	return !ui->filter[0] || strcasestr(r->name, ui->filter);
}

static const struct top_ui *sort_ui;

static double sort_key(const struct tacho_live_row *r)
{
	double k;

	if (sort_ui->sort == TOP_SORT_CPU) {
		k = r->cpus;
	} else {
		k = r->values[sort_ui->sort].rate;
		/* a row's first frame has no rate yet: a task's clock (msec/s) is then
		 * sorted by its CPU use from /proc, the same quantity, so that a busy
		 * newcomer is among the busy at once */
		if (!isfinite(k) && isfinite(r->cpus) && (r->kind == TACHO_LIVE_PROCESS ||
		    r->kind == TACHO_LIVE_THREAD) &&
		    !strcmp(tacho_live_frame_unit(sort_ui->frame, (size_t)sort_ui->sort), "msec"))
			k = r->cpus * 1000;
	}
	return isfinite(k) ? k : -1;
}

static int cmp_idx(const void *a, const void *b)
{
	const struct tacho_live_row *x = tacho_live_frame_row(sort_ui->frame, *(const size_t *)a);
	const struct tacho_live_row *y = tacho_live_frame_row(sort_ui->frame, *(const size_t *)b);
	double kx = sort_key(x), ky = sort_key(y);
	int c = kx > ky ? -1 : kx < ky;

	if (!c)
		c = x->id < y->id ? -1 : x->id > y->id;
	return sort_ui->reverse ? -c : c;
}

size_t top_rows(const struct top_ui *ui, size_t *idx)
{
	size_t n = 0, nr = tacho_live_frame_nrows(ui->frame);

	for (size_t i = 0; i < nr; i++)
		if (shown(ui, tacho_live_frame_row(ui->frame, i)))
			idx[n++] = i;
	if (ui->sort == TOP_SORT_NATURAL) {
		if (ui->reverse)
			for (size_t i = 0; i < n / 2; i++) {
				size_t t = idx[i];
				idx[i] = idx[n - 1 - i];
				idx[n - 1 - i] = t;
			}
		return n;
	}
	sort_ui = ui;   /* qsort has no argument: the one screen there is */
	qsort(idx, n, sizeof(*idx), cmp_idx);
	return n;
}

/* A rate in a few characters: "12.3k", "998m" for msec/s shown as "998.0". */
static const char *short_rate(const struct tacho_live_value *v, char *buf, size_t size)
{
	static const char sfx[] = " kMGTPE";
	double x = v->rate;
	int i = 0;

	if (v->status == TACHO_COUNT_NOT_SUPPORTED)
		return snprintf(buf, size, "n/s"), buf;
	if (v->status == TACHO_COUNT_NOT_COUNTED || !isfinite(x))
		return snprintf(buf, size, "-"), buf;
	while (fabs(x) >= 1000 && i < 6) {
		x /= 1000;
		i++;
	}
	if (i)
		snprintf(buf, size, "%.1f%c", x, sfx[i]);
	else if (x == floor(x))
		snprintf(buf, size, "%.0f", x);
	else
		snprintf(buf, size, "%.1f", x);
	return buf;
}

static void title(struct top_ui *ui, int cols)
{
	const struct tacho_live_frame *f = ui->frame;
	const struct tacho_live_health *h = tacho_live_frame_health(f);
	char line[512];
	int n;

	static const char *const every[] = {
		[TACHO_LIVE_MACHINE] = "the whole machine", [TACHO_LIVE_CPU] = "every CPU",
		[TACHO_LIVE_PROCESS] = "the busiest processes",
		[TACHO_LIVE_THREAD] = "the busiest threads", [TACHO_LIVE_CGROUP] = "cgroups",
	};
	enum tacho_live_view v = tacho_live_frame_view(f);

	n = snprintf(line, sizeof(line), "tacho top - %s view - %s - every %.2g s",
		     tacho_live_view_name(v), ui->target ? ui->target :
		     (unsigned)v < ARRAY_SIZE(every) ? every[v] : "", ui->interval);
	if (ui->paused)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "  [paused]");
	attron(A_BOLD);
	mvaddnstr(0, 0, line, cols);
	attroff(A_BOLD);
	n = snprintf(line, sizeof(line), "%.1f s: %u row%s", tacho_live_frame_time(f), h->rows,
		     h->rows == 1 ? "" : "s");
	if (h->not_followed)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %u more not followed (-k)",
			      h->not_followed);
	if (h->no_permission)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %u of other users not "
			      "counted (no permission)", h->no_permission);
	if (h->no_descriptors)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %u not counted (file "
			      "descriptor limit)", h->no_descriptors);
	if (ui->filtering)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "   filter: %s_ (Enter keeps it, "
			      "Esc or an empty one clears it)", ui->filter);
	else if (ui->filter[0])
		n += snprintf(line + n, sizeof(line) - (size_t)n, "   filter: %s (Esc clears)",
			      ui->filter);
	mvaddnstr(1, 0, line, cols);
}

/* Why events have no value, once each: the screen says what it cannot count. */
static int reasons(struct top_ui *ui, int y, int rows_end, int cols)
{
	const struct tacho_live_frame *f = ui->frame;
	size_t nev = tacho_live_frame_nevents(f), nr = tacho_live_frame_nrows(f);

	if (tacho_live_frame_health(f)->empty && y < rows_end)
		mvaddnstr(y++, 0, tacho_live_frame_health(f)->empty, cols);
	if (ui->note && ui->note[0] && y < rows_end)
		mvaddnstr(y++, 0, ui->note, cols);
	for (size_t e = 0; e < nev && y < rows_end; e++)
		for (size_t i = 0; i < nr; i++) {
			const struct tacho_live_value *v = &tacho_live_frame_row(f, i)->values[e];
			char line[700];
			if (v->status != TACHO_COUNT_NOT_SUPPORTED || !v->why)
				continue;
			snprintf(line, sizeof(line), "%s: %s", tacho_live_frame_event(f, e),
				 cli_hinted(v->why, v->hint));
			mvaddnstr(y++, 0, line, cols);
			break;
		}
	return y;
}

static void plot(struct top_ui *ui, const struct tacho_live_row *r, int y, int height, int cols)
{
	const struct tacho_live_frame *f = ui->frame;
	size_t nev = tacho_live_frame_nevents(f);
	int per = nev ? height / (int)nev : 0;

	if (per > 8)
		per = 8;
	if (per < 2)
		per = height >= 2 ? 2 : 0;
	for (size_t e = 0; e < nev && per && y + per <= LINES - 1; e++, y += per) {
		const double *h = r->history + e * r->nhistory;
		int w = cols - 12, lines = per - 1;
		size_t n = r->nhistory, from = n > (size_t)w ? n - (size_t)w : 0;
		double max = 0, last = n ? h[n - 1] : NAN;
		char head[256], num[32];

		for (size_t i = from; i < n; i++)
			if (isfinite(h[i]) && h[i] > max)
				max = h[i];
		snprintf(head, sizeof(head), "%s (%s/s) of %s: now %s, max %.4g", tacho_live_frame_event(f, e),
			 tacho_live_frame_unit(f, e)[0] ? tacho_live_frame_unit(f, e) : "count",
			 r->name, isfinite(last) ? (snprintf(num, sizeof(num), "%.4g", last), num) : "-",
			 max);
		attron(A_BOLD);
		mvaddnstr(y, 0, head, cols);
		attroff(A_BOLD);
		for (int l = 0; l < lines; l++) {
			/* line l from the top; each cell is eight steps of the bar */
			int base = (lines - 1 - l) * 8;
			move(y + 1 + l, 0);
			if (l == 0)
				printw("%10.3g ", max);
			else if (l == lines - 1)
				printw("%10d ", 0);
			else
				printw("%10s ", "");
			for (size_t i = from; i < n; i++) {
				int lvl = isfinite(h[i]) && max > 0 ? (int)lround(h[i] / max * lines * 8)
								     : 0;
				int cell = lvl - base;
				if (cell < 0)
					cell = 0;
				if (cell > 8)
					cell = 8;
				if (ui->ascii)
					addch(cell >= 8 ? '#' : cell > 0 ? '.' : ' ');
				else
					addstr(blocks[cell]);
			}
		}
	}
}

/* The symbols view: the hottest functions of the interval, each with its share, its
 * binary and the sparkline of its recent shares. */
static void draw_symbols(struct top_ui *ui)
{
	const struct tacho_live_symtab *t = ui->symtab;
	struct tacho_live_symtab_info info;
	int cols = COLS, y = 3, spark_w;
	char line[2048], spark[1024];
	size_t shown_n = 0;

	tacho_live_symtab_info(t, &info);
	snprintf(line, sizeof(line), "tacho top - symbols view - %s - %s sampled, every %.2g s%s",
		 ui->sym_target, ui->sym_event ? ui->sym_event : "", ui->interval,
		 ui->paused ? "  [paused]" : "");
	attron(A_BOLD);
	mvaddnstr(0, 0, line, cols);
	attroff(A_BOLD);
	if (t) {
		int n = snprintf(line, sizeof(line), "%.1f s: %llu samples in the last interval",
				 info.time, info.samples);
		if (info.lost)
			n += snprintf(line + n, sizeof(line) - (size_t)n, ", %llu lost in all",
				      info.lost);
		if (ui->filtering)
			snprintf(line + n, sizeof(line) - (size_t)n, "   filter: %s_ (Enter keeps "
				 "it, Esc or an empty one clears it)", ui->filter);
		else if (ui->filter[0])
			snprintf(line + n, sizeof(line) - (size_t)n, "   filter: %s (Esc clears)",
				 ui->filter);
	} else {
		snprintf(line, sizeof(line), "sampling, the first interval is coming...");
	}
	mvaddnstr(1, 0, line, cols);
	spark_w = cols - (7 + 2 + 20 + 1 + 40 + 2) - 1;
	if (spark_w > (int)sizeof(spark) / 4)
		spark_w = (int)sizeof(spark) / 4;
	snprintf(line, sizeof(line), "%7s  %-20s %-40s%s", "SHARE", "DSO", "SYMBOL",
		 spark_w > 4 ? "  history of its share" : "");
	attron(A_REVERSE);
	mvaddnstr(2, 0, line, cols);
	for (int x = (int)strlen(line); x < cols; x++)
		addch(' ');
	attroff(A_REVERSE);
	for (size_t i = 0; t && i < tacho_live_symtab_count(t) && y < LINES - 1; i++) {
		const struct tacho_live_symbol *s = tacho_live_symtab_at(t, i);
		int o;

		if (ui->filter[0] && !strcasestr(s->name, ui->filter) &&
		    !strcasestr(s->dso, ui->filter))
			continue;
		o = snprintf(line, sizeof(line), "%6.2f%%  %-20.20s %-40.40s", 100 * s->share,
			     s->dso, s->name);
		if (spark_w > 4)
			snprintf(line + o, sizeof(line) - (size_t)o, "  %s",
				 top_sparkline(s->history, s->nhistory, (size_t)spark_w, ui->ascii,
					       spark, sizeof(spark)));
		mvaddstr(y++, 0, line);
		shown_n++;
	}
	if (t && !shown_n && y < LINES - 1)
		mvaddnstr(y, 0, info.samples ? "(no symbol matches the filter)" :
			  "(no sample in the last interval: nothing ran there)", cols);
	attron(A_REVERSE);
	snprintf(line, sizeof(line), "%s%ss or Esc back  q quit  / filter (Esc clears)  space "
		 "pause", ui->message, ui->message[0] ? "  |  " : "");
	mvaddnstr(LINES - 1, 0, line, cols);
	for (int x = (int)strlen(line); x < cols; x++)
		addch(' ');
	attroff(A_REVERSE);
	refresh();
}

void top_draw(struct top_ui *ui)
{
	const struct tacho_live_frame *f = ui->frame;
	size_t nev, nr, *idx, n;
	int cols = COLS, y = 3, rows_end, sel_line = -1, plot_h = 0, spark_w, ev_w = 8;
	const struct tacho_live_row *sel = NULL;
	char line[2048], buf[64], spark[1024];

	erase();
	if (ui->symbols) {
		draw_symbols(ui);
		return;
	}
	if (!f) {
		mvaddnstr(0, 0, "tacho top: counting, the first interval is coming...", cols);
		refresh();
		return;
	}
	nev = tacho_live_frame_nevents(f);
	nr = tacho_live_frame_nrows(f);
	idx = calloc(nr ? nr : 1, sizeof(*idx));
	if (!idx)
		return;
	n = top_rows(ui, idx);
	title(ui, cols);
	/* as wide as the longest event name, within reason and the screen */
	for (size_t e = 0; e < nev; e++) {
		int l = (int)strlen(tacho_live_frame_event(f, e)) + 1;
		if (l > ev_w)
			ev_w = l < 18 ? l : 18;
	}
	while (ev_w > 8 && 32 + (int)nev * (ev_w + 1) > cols)
		ev_w--;
	if (ui->plot)
		plot_h = (LINES - 4) / 2;
	rows_end = LINES - 1 - plot_h;

	/* the sparkline takes what the columns leave: the sort event's history (the first
	 * event's when sorting by CPU or in the frame's order) */
	spark_w = cols - (8 + 17 + 7 + (int)nev * (ev_w + 1)) - 2;
	if (spark_w > (int)sizeof(spark) / 4)
		spark_w = (int)sizeof(spark) / 4;
	{
		int o = snprintf(line, sizeof(line), "%7s %-16s %6s", tacho_live_frame_view(f) ==
				 TACHO_LIVE_THREAD ? "TID" : tacho_live_frame_view(f) ==
				 TACHO_LIVE_CPU ? "CPU" : tacho_live_frame_view(f) ==
				 TACHO_LIVE_CGROUP || tacho_live_frame_view(f) ==
				 TACHO_LIVE_MACHINE ? "" : "PID", "NAME", "CPU%");
		for (size_t e = 0; e < nev && o < (int)sizeof(line) - 64; e++) {
			char name[64];
			snprintf(name, sizeof(name), "%s%s", (int)e == ui->sort ? (ui->reverse ?
				 (ui->ascii ? "^" : "\u25b2") : (ui->ascii ? "v" : "\u25bc")) : "",
				 tacho_live_frame_event(f, e));
			/* the arrow is three bytes in one cell */
			int wide = (int)e == ui->sort && !ui->ascii ? 2 : 0;
			o += snprintf(line + o, sizeof(line) - (size_t)o, " %*.*s", ev_w + wide,
				      ev_w + wide, name);
		}
		if (spark_w > 4)
			snprintf(line + o, sizeof(line) - (size_t)o, "  history of %s",
				 tacho_live_frame_event(f, ui->sort >= 0 ? (size_t)ui->sort : 0));
		attron(A_REVERSE);
		mvaddnstr(2, 0, line, cols);
		for (int x = (int)strlen(line); x < cols; x++)
			addch(' ');
		attroff(A_REVERSE);
	}
	for (size_t k = 0; k < n; k++) {
		const struct tacho_live_row *r = tacho_live_frame_row(f, idx[k]);
		size_t se = ui->sort >= 0 ? (size_t)ui->sort : 0;
		int o;

		if (ui->have_sel && r->id == ui->sel_id) {
			sel = r;
			sel_line = y;
		}
		if (y >= rows_end)
			continue;
		if (r->kind == TACHO_LIVE_PROCESS || r->kind == TACHO_LIVE_THREAD ||
		    r->kind == TACHO_LIVE_CPU)
			snprintf(buf, sizeof(buf), "%lld", r->id);
		else
			buf[0] = '\0';
		o = snprintf(line, sizeof(line), "%7s %-16.16s %6s", buf, r->name,
			     isfinite(r->cpus) ? (snprintf(spark, sizeof(spark), "%.1f",
							   100 * r->cpus), spark) : "-");
		for (size_t e = 0; e < nev && o < (int)sizeof(line) - 64; e++)
			o += snprintf(line + o, sizeof(line) - (size_t)o, " %*s", ev_w,
				      short_rate(&r->values[e], buf, sizeof(buf)));
		if (spark_w > 4 && nev)
			snprintf(line + o, sizeof(line) - (size_t)o, "  %s",
				 top_sparkline(r->history + se * r->nhistory, r->nhistory,
					       (size_t)spark_w, ui->ascii, spark, sizeof(spark)));
		if (sel_line == y)
			attron(A_REVERSE);
		if (r->ended)
			attron(A_DIM);
		mvaddstr(y, 0, line);
		if (r->ended)
			attroff(A_DIM);
		if (sel_line == y)
			attroff(A_REVERSE);
		y++;
	}
	y = reasons(ui, y, rows_end, cols);
	if (ui->plot && sel)
		plot(ui, sel, rows_end, plot_h, cols);
	else if (ui->plot)
		mvaddnstr(rows_end, 0, "(select a row with the arrow keys to plot it)", cols);
	if (ui->help) {
		static const char *const h[] = {
			"q quit   space pause   h help",
			"m machine  c CPUs  p processes  t threads  g cgroups",
			"s the hottest symbols of the selected process (else the machine); s or "
			"Esc back",
			"< > sort column   r reverse   / filter by name (Enter ends; Esc, or / then "
			"Enter, clears)",
			"up/down (j/k) select a row   Enter plot it   Esc close the plot",
		};
		for (size_t i = 0; i < ARRAY_SIZE(h); i++)
			mvaddnstr(LINES - 1 - (int)ARRAY_SIZE(h) + (int)i, 2, h[i], cols - 2);
	}
	attron(A_REVERSE);
	snprintf(line, sizeof(line), "%s%sq quit  m/c/p/t/g view  s symbols  </> sort  / filter "
		 "(Esc clears)  space pause  Enter plot  h help", ui->message,
		 ui->message[0] ? "  |  " : "");
	mvaddnstr(LINES - 1, 0, line, cols);
	for (int x = (int)strlen(line); x < cols; x++)
		addch(' ');
	attroff(A_REVERSE);
	refresh();
	free(idx);
}
