/* top.h - tacho top's screen (top-view.c): what the command hands its view to draw. */
#ifndef TACHO_CLI_TOP_H
#define TACHO_CLI_TOP_H

#include <stdbool.h>

#include "live.h"

#define TOP_SORT_NATURAL (-2)   /* the frame's order */
#define TOP_SORT_CPU (-1)

struct top_ui {
	const struct tacho_live_frame *frame;   /* NULL before the first interval */
	const char *target;            /* what is counted, for the title */
	double interval;
	int sort;                      /* TOP_SORT_*, or an event's index */
	bool reverse;
	char filter[64];
	bool filtering;                /* typing the filter */
	bool paused;
	long long sel_id;              /* the selected row's id */
	bool have_sel;
	bool plot;                     /* the selected row's plot is open */
	bool help;
	bool ascii;                    /* no UTF-8: ASCII sparklines */
	const char *note;              /* why the events are software ones, or "" */
	const struct tacho_live_symtab *symtab;  /* the symbols view's table, or NULL */
	bool symbols;                  /* the symbols view is shown */
	char sym_target[96];           /* whose symbols: "the whole machine", "process 42" */
	const char *sym_event;         /* the event sampled */
	char message[400];             /* the last thing that happened ("program ended") */
};

/* The rows of the frame as shown: filtered, sorted; idx gets frame row indices, the
 * return is how many. idx holds at least nrows entries. */
size_t top_rows(const struct top_ui *ui, size_t *idx);
/* Draws the whole screen (ncurses, already initialised): the symbols view when
 * ui->symbols, else the frame's rows. */
void top_draw(struct top_ui *ui);
/* Writes a sparkline of n values into buf (UTF-8 or ASCII), width cells, scaled to the
 * largest; NAN is a blank. Returns buf. */
char *top_sparkline(const double *v, size_t n, size_t width, bool ascii, char *buf, size_t size);

#endif
