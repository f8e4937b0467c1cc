/* cmd-top.c - `tacho top`: event rates live, per process, thread, CPU, cgroup or for the
 * whole machine, each row with the sparkline of its history, on a full screen
 * (ncurses: keys to switch views, sort, filter, pause, plot a row), or as lines of text,
 * CSV or JSON with -b (MTPM's logging). The sampler and the writers are the library's
 * (tacho/live.h); this file parses options, runs the loop and draws (top-view.c). */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "top-curses.h"
#include "top.h"

#define GO_ON (-1)

enum { OPT_CSV = 256, OPT_JSON, OPT_ASCII };

static const char top_usage[] =
	"usage: tacho top [-e <events>] [-d <seconds>] [--view <view>] [-k <n>] [--ascii]\n"
	"                 [-b [-n <n>] [--csv | --json] [-o <file>]]\n"
	"                 [-p <pid> | -G <cgroup>... | [--] <program> [<args>]]\n"
	"\n"
	"Shows event rates as they happen, refreshed every -d seconds: for each process (the\n"
	"busiest -k by the event shown), each thread, each CPU, each cgroup or the machine,\n"
	"every row with a sparkline of its recent history; a selected row opens a larger\n"
	"time plot of each event. With a program, tacho starts it, counts it from its exec\n"
	"and stops when it ends. -b prints each refresh instead (text, CSV or JSON lines).\n"
	"\n";

static const struct cli_option top_options[] = {
	{ 'e', 'e', "event", "<events>",
	  "events to count (docs/events.md). Default: task-clock,\n"
	  "context-switches, cpu-migrations, page-faults (and cycles,\n"
	  "instructions where a hardware PMU counts them)" },
	{ 'd', 'd', "delay", "<seconds>", "the refresh interval (default 1, at least 0.05)" },
	{ LIVE_OPT_VIEW, 0, "view", "<view>",
	  "machine, cpu, process (the default), thread, cgroup\n"
	  "or symbols (the hottest functions, perf top's view)" },
	{ 'p', 'p', "pid", "<pid>", "this process alone (the thread view: its threads)" },
	{ 'G', 'G', "cgroup", "<cgroup>",
	  "count this cgroup (a path under the perf_event\n"
	  "hierarchy); may be repeated; implies --view cgroup" },
	{ 'k', 'k', "max", "<n>",
	  "follow at most n processes, threads or cgroups (the\n"
	  "busiest by the event shown; default 32)" },
	{ 'b', 'b', "batch", NULL, "no screen: print each refresh on standard output" },
	{ 'n', 'n', "iterations", "<n>", "with -b: stop after n refreshes" },
	{ OPT_CSV, 0, "csv", NULL, "with -b: CSV, a row per row and event" },
	{ OPT_JSON, 0, "json", NULL, "with -b: one JSON object per refresh and line" },
	{ 'o', 'o', "output", "<file>", "with -b: write there instead of standard output" },
	{ OPT_ASCII, 0, "ascii", NULL, "ASCII sparklines even where the locale has UTF-8" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char top_footer[] =
	"keys: q quit, space pause, m/c/p/t/g the machine, CPU, process, thread, cgroup view,\n"
	"s the hottest symbols (of the selected process, else of the machine; s or Esc goes\n"
	"back),\n"
	"< and > the sort column, r reverse, / filter by name (Esc, or / and Enter, clears\n"
	"it), up/down select, Enter plot, Esc close the plot, h help.\n"
	"\n"
	"exit status: the program's when one ran, else 0; 1 when counting failed, 2 for bad\n"
	"usage. docs/top.md tells more.\n";

struct top_cli {
	struct live_cli lc;
	bool batch;
	unsigned iterations;
	enum tacho_format fmt;
	bool fmt_set;
	const char *outpath;
	FILE *out;
	struct tacho_write_opts wo;
	struct top_ui ui;
	struct tacho_live_frame *frame;
	char target[128];
	bool symbols;                   /* --view symbols */
	struct tacho_evlist *symev;     /* the event the symbols view samples */
	struct tacho_live_symbols *sym;
	struct tacho_live_symtab *symtab;
};

/* The symbols view's sampler on pid (0: every task): cycles where a PMU counts them,
 * cpu-clock elsewhere. 0, or -1 with why in *why. */
static int symbols_open(struct top_cli *t, pid_t pid, char *why, size_t size)
{
	struct tacho_live_symbols_opts o = { .sz = sizeof(o) };
	struct tacho_pmu_counters pmu = { .sz = sizeof(pmu) };
	struct tacho_diag diag;
	bool hw = !tacho_pmu_counters_detect(&pmu) && pmu.known && !pmu.none;
	int err;

	memset(&diag, 0, sizeof(diag));
	diag.sz = sizeof(diag);
	if (!t->symev && tacho_evlist_parse(hw ? "cycles" : "cpu-clock", &t->symev, &diag)) {
		snprintf(why, size, "%s", diag.message);
		return -1;
	}
	o.event = t->symev;
	o.pid = pid;
	err = tacho_live_symbols_new(&o, &t->sym, &diag);
	if (err) {
		snprintf(why, size, "%s", diag.message[0] ? diag.message : tacho_strerror(err));
		return -1;
	}
	if (pid)
		snprintf(t->ui.sym_target, sizeof(t->ui.sym_target), "process %d", (int)pid);
	else
		snprintf(t->ui.sym_target, sizeof(t->ui.sym_target), "the whole machine");
	t->ui.sym_event = tacho_live_symbols_event(t->sym);
	/* the first table starts the sampling; it is empty */
	if (!tacho_live_symbols_sample(t->sym, &t->symtab)) {
		tacho_live_symtab_free(t->symtab);
		t->symtab = NULL;
	}
	return 0;
}

static void symbols_close(struct top_cli *t)
{
	tacho_live_symtab_free(t->symtab);
	t->symtab = NULL;
	t->ui.symtab = NULL;
	tacho_live_symbols_free(t->sym);
	t->sym = NULL;
	t->ui.symbols = false;
}

static int set_format(struct top_cli *t, enum tacho_format fmt)
{
	if (t->fmt_set && t->fmt != fmt)
		return cli_usage_error(&cmd_top, "choose one output format: --csv or --json");
	t->fmt = fmt;
	t->fmt_set = true;
	return GO_ON;
}

static int top_parse(struct top_cli *t, int argc, char **argv)
{
	struct cli_args args;
	int opt, k;
	uint64_t v;

	cli_args_init(&args, &cmd_top, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		if (opt == LIVE_OPT_VIEW && !strcmp(optarg, "symbols")) {
			t->symbols = true;
			continue;
		}
		k = live_cli_option(&t->lc, opt, optarg);
		if (k == 1)
			continue;
		if (k)
			return k;
		switch (opt) {
		case 'b':
			t->batch = true;
			break;
		case 'n':
			if (tc_parse_u64(optarg, &v) || v == 0 || v > 100000000)
				return cli_usage_error(&cmd_top, "bad value for -n: '%s' (a whole "
						       "number from 1)", optarg);
			t->iterations = (unsigned)v;
			break;
		case OPT_CSV:
			if (set_format(t, TACHO_FORMAT_CSV) != GO_ON)
				return EXIT_USAGE;
			break;
		case OPT_JSON:
			if (set_format(t, TACHO_FORMAT_JSON_LINES) != GO_ON)
				return EXIT_USAGE;
			break;
		case 'o':
			t->outpath = optarg;
			break;
		case OPT_ASCII:
			t->ui.ascii = true;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (!t->batch && (t->iterations || t->fmt_set || t->outpath))
		return cli_usage_error(&cmd_top, "-n, --csv, --json and -o go with -b");
	if (!t->batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return cli_usage_error(&cmd_top, "the screen needs a terminal (use -b to print "
				       "refreshes instead)");
	return GO_ON;
}

/* The process and thread views over every task choose their rows by the event shown
 * (sort: an event's index, else CPU time). 0, or -1 with why in the message (and the
 * rows chosen by CPU time). */
static int apply_rank(struct top_cli *t, int sort)
{
	struct live_cli *lc = &t->lc;
	int err;

	if ((lc->view != TACHO_LIVE_PROCESS && lc->view != TACHO_LIVE_THREAD) || lc->pid)
		return 0;
	err = tacho_live_rank_by(lc->live, sort >= 0 ? sort : -1);
	if (!err)
		return 0;
	snprintf(t->ui.message, sizeof(t->ui.message), "rows chosen by CPU time: cannot sample "
		 "%s on every CPU: %s", sort >= 0 ? tacho_evlist_name(lc->list, (size_t)sort) :
		 "", tacho_strerror(err));
	return -1;
}

/* --- batch --- */

static int top_batch_symbols(struct top_cli *t)
{
	struct live_cli *lc = &t->lc;
	char why[600];
	unsigned done = 0;
	double next;
	int err = 0;

	if (t->fmt != TACHO_FORMAT_TABLE)
		return cli_usage_error(&cmd_top, "the symbols view prints text alone (no --csv "
				       "or --json)");
	if (symbols_open(t, lc->pid, why, sizeof(why))) {
		cli_error("cannot sample the symbols of %s: %s", lc->pid ? "the process" :
			  "the machine", why);
		return EXIT_FAIL;
	}
	next = live_now() + lc->interval;
	while (!err && !cli_stop_sig) {
		live_cli_wait(lc, next, -1);
		if (cli_stop_sig)
			break;
		if (live_now() < next && !lc->child_done)
			continue;
		err = tacho_live_symbols_sample(t->sym, &t->symtab);
		if (err)
			break;
		if (done)
			fputc('\n', t->out);
		err = tacho_live_symtab_write(t->symtab, t->out);
		fflush(t->out);
		tacho_live_symtab_free(t->symtab);
		t->symtab = NULL;
		done++;
		if (err || live_cli_reap(lc) || (t->iterations && done >= t->iterations))
			break;
		next += lc->interval;
		if (next < live_now())
			next = live_now() + lc->interval;
	}
	if (err && err != -EIO)
		cli_error("cannot sample: %s", tacho_strerror(err));
	if (cli_close_output(t->out, t->outpath ? t->outpath : NULL) != EXIT_OK || err)
		return EXIT_FAIL;
	t->out = NULL;
	return GO_ON;
}

static int top_batch(struct top_cli *t)
{
	struct live_cli *lc = &t->lc;
	double next;
	unsigned done = 0;
	int err;

	t->out = cli_open_output(t->outpath);
	if (!t->out)
		return EXIT_FAIL;
	if (t->symbols)
		return top_batch_symbols(t);
	if (lc->note[0] && (t->fmt == TACHO_FORMAT_TABLE || t->outpath))
		cli_warn("%s", lc->note);
	/* the rows: the busiest by the first event */
	if (apply_rank(t, 0))
		cli_warn("%s", t->ui.message);
	/* the first sample starts counting; its frame has no rates yet */
	err = tacho_live_sample(lc->live, &t->frame);
	tacho_live_frame_put(t->frame);
	t->frame = NULL;
	next = live_now() + lc->interval;
	while (!err && !cli_stop_sig) {
		live_cli_wait(lc, next, -1);
		if (cli_stop_sig)
			break;
		if (live_now() < next && !lc->child_done)
			continue;
		err = tacho_live_sample(lc->live, &t->frame);
		if (err)
			break;
		t->wo.csv_no_header = done > 0;
		if (t->fmt == TACHO_FORMAT_TABLE && done)
			fputc('\n', t->out);
		err = tacho_live_frame_write(t->frame, t->out, t->fmt, &t->wo);
		fflush(t->out);
		tacho_live_frame_put(t->frame);
		t->frame = NULL;
		if (err)
			break;
		done++;
		if (live_cli_reap(lc) || (t->iterations && done >= t->iterations))
			break;
		next += lc->interval;
		if (next < live_now())
			next = live_now() + lc->interval;
	}
	if (err && err != -EIO)
		cli_error("cannot %s: %s", t->frame ? "write a refresh" : "count",
			  tacho_strerror(err));
	if (cli_close_output(t->out, t->outpath ? t->outpath : NULL) != EXIT_OK || err)
		return EXIT_FAIL;
	t->out = NULL;
	return GO_ON;
}

/* --- the screen --- */

/* A new sampler for view v (the program, once started, is a process like any). */
static void switch_view(struct top_cli *t, enum tacho_live_view v)
{
	struct live_cli *lc = &t->lc;
	struct tacho_live_opts o = { .sz = sizeof(o) };
	struct tacho_live *nl;
	struct tacho_diag diag;
	int err;

	if ((lc->pid || lc->argv) && v != TACHO_LIVE_PROCESS && v != TACHO_LIVE_THREAD) {
		snprintf(t->ui.message, sizeof(t->ui.message), "the %s view is not for one "
			 "process", tacho_live_view_name(v));
		return;
	}
	o.events = lc->list;
	o.view = v;
	o.pid = lc->pid;
	o.max_rows = lc->max_rows;
	if (v == TACHO_LIVE_CGROUP && lc->ncgroups) {
		o.cgroups = lc->cgroups;
		o.ncgroups = lc->ncgroups;
	}
	memset(&diag, 0, sizeof(diag));
	diag.sz = sizeof(diag);
	err = tacho_live_new(&o, &nl, &diag);
	if (err) {
		snprintf(t->ui.message, sizeof(t->ui.message), "no %s view: %s",
			 tacho_live_view_name(v), diag.message[0] ? diag.message : tacho_strerror(err));
		return;
	}
	tacho_live_free(lc->live);
	lc->live = nl;
	lc->view = v;
	tacho_live_frame_put(t->frame);
	t->frame = NULL;
	t->ui.frame = NULL;
	t->ui.have_sel = false;
	t->ui.sort = v == TACHO_LIVE_PROCESS || v == TACHO_LIVE_THREAD ? 0 : TOP_SORT_NATURAL;
	t->ui.message[0] = '\0';
	apply_rank(t, t->ui.sort);
	/* the baseline of the new rows */
	if (!tacho_live_sample(lc->live, &t->frame)) {
		tacho_live_frame_put(t->frame);
		t->frame = NULL;
	}
}

/* Moves the selection by d rows of what is shown. */
static void select_move(struct top_cli *t, int d)
{
	size_t nr = tacho_live_frame_nrows(t->frame), *idx, n, at = 0;

	if (!nr)
		return;
	idx = calloc(nr, sizeof(*idx));
	if (!idx)
		return;
	n = top_rows(&t->ui, idx);
	for (size_t i = 0; t->ui.have_sel && i < n; i++)
		if (tacho_live_frame_row(t->frame, idx[i])->id == t->ui.sel_id)
			at = i;
	if (t->ui.have_sel) {
		if (d < 0 && at > 0)
			at--;
		else if (d > 0 && at + 1 < n)
			at++;
	}
	if (n) {
		t->ui.sel_id = tacho_live_frame_row(t->frame, idx[at])->id;
		t->ui.have_sel = true;
	}
	free(idx);
}

/* One key; false to quit. */
static bool on_key(struct top_cli *t, int ch)
{
	struct top_ui *ui = &t->ui;
	size_t nev = tacho_live_nevents(t->lc.live);

	if (ui->filtering) {
		size_t n = strlen(ui->filter);
		if (ch == '\n' || ch == KEY_ENTER) {
			ui->filtering = false;
		} else if (ch == 27) {
			ui->filtering = false;
			ui->filter[0] = '\0';
		} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
			if (n)
				ui->filter[n - 1] = '\0';
		} else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(ui->filter)) {
			ui->filter[n] = (char)ch;
			ui->filter[n + 1] = '\0';
		}
		return true;
	}
	if (ui->symbols && (ch == 's' || ch == 27 || ch == KEY_BACKSPACE || ch == 127)) {
		symbols_close(t);
		return true;
	}
	if (ui->symbols && ch < 0x80 && ch > 0 && strchr("mcptg", ch))
		symbols_close(t);     /* a view's key leaves the symbols for it */
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 's': {
		/* the selected process's symbols, else the machine's (or the one process
		 * counted) */
		pid_t pid = t->lc.pid;
		char why[600];

		if (ui->have_sel && t->frame) {
			for (size_t i = 0; i < tacho_live_frame_nrows(t->frame); i++) {
				const struct tacho_live_row *r = tacho_live_frame_row(t->frame, i);
				if (r->id == ui->sel_id && r->pid > 0)
					pid = r->pid;
			}
		}
		if (symbols_open(t, pid, why, sizeof(why)))
			snprintf(ui->message, sizeof(ui->message), "no symbols view: %.360s", why);
		else
			ui->symbols = true;
		break;
	}
	case ' ':
		ui->paused = !ui->paused;
		break;
	case 'h':
	case '?':
		ui->help = !ui->help;
		break;
	case 'm':
		switch_view(t, TACHO_LIVE_MACHINE);
		break;
	case 'c':
		switch_view(t, TACHO_LIVE_CPU);
		break;
	case 'p':
		switch_view(t, TACHO_LIVE_PROCESS);
		break;
	case 't':
		switch_view(t, TACHO_LIVE_THREAD);
		break;
	case 'g':
		switch_view(t, TACHO_LIVE_CGROUP);
		break;
	case '<':
		if (ui->sort > TOP_SORT_NATURAL) {
			ui->sort--;
			ui->message[0] = '\0';
			apply_rank(t, ui->sort);
		}
		break;
	case '>':
		if (ui->sort + 1 < (int)nev) {
			ui->sort++;
			ui->message[0] = '\0';
			apply_rank(t, ui->sort);
		}
		break;
	case 'r':
		ui->reverse = !ui->reverse;
		break;
	case '/':
		/* a new filter: Enter on an empty one leaves none */
		ui->filtering = true;
		ui->filter[0] = '\0';
		break;
	case KEY_UP:
	case 'k':
		select_move(t, -1);
		break;
	case KEY_DOWN:
	case 'j':
		select_move(t, 1);
		break;
	case '\n':
	case KEY_ENTER:
		if (!ui->have_sel)
			select_move(t, 0);
		ui->plot = !ui->plot;
		break;
	case 27:
		/* Esc closes the plot, else clears the filter */
		if (ui->plot)
			ui->plot = false;
		else
			ui->filter[0] = '\0';
		break;
	}
	return true;
}

static int top_screen(struct top_cli *t)
{
	struct live_cli *lc = &t->lc;
	double next;
	bool quit = false;
	int err;

	if (top_curses_load())
		return EXIT_FAIL;
	err = tacho_live_sample(lc->live, &t->frame);
	tacho_live_frame_put(t->frame);
	t->frame = NULL;
	if (err) {
		cli_error("cannot count: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	t->ui.interval = lc->interval;
	t->ui.note = lc->note;
	t->ui.sort = lc->view == TACHO_LIVE_PROCESS || lc->view == TACHO_LIVE_THREAD ? 0
										      : TOP_SORT_NATURAL;
	apply_rank(t, t->ui.sort);
	if (t->symbols) {
		char why[600];
		if (symbols_open(t, lc->pid, why, sizeof(why)))
			snprintf(t->ui.message, sizeof(t->ui.message), "no symbols view: %.360s", why);
		else
			t->ui.symbols = true;
	}
	top_draw(&t->ui);
	next = live_now() + lc->interval;
	while (!quit && !cli_stop_sig) {
		int ch;
		bool redraw = false;

		live_cli_wait(lc, next, STDIN_FILENO);
		while ((ch = getch()) != ERR) {
			if (!on_key(t, ch)) {
				quit = true;
				break;
			}
			redraw = true;
		}
		if (quit || cli_stop_sig)
			break;
		if ((live_now() >= next || (lc->child_done && lc->child)) && t->ui.symbols) {
			struct tacho_live_symtab *st;
			err = tacho_live_symbols_sample(t->sym, &st);
			if (err) {
				snprintf(t->ui.message, sizeof(t->ui.message), "cannot sample: %s",
					 tacho_strerror(err));
			} else if (!t->ui.paused || !t->symtab) {
				tacho_live_symtab_free(t->symtab);
				t->symtab = st;
				t->ui.symtab = st;
			} else {
				tacho_live_symtab_free(st);
			}
			if (live_cli_reap(lc) && lc->argv) {
				char how[128];
				snprintf(t->ui.message, sizeof(t->ui.message), "'%s' %s", lc->argv[0],
					 tacho_exit_describe(&lc->exit, how, sizeof(how)));
			}
			next += lc->interval;
			if (next < live_now())
				next = live_now() + lc->interval;
			redraw = true;
		} else if (live_now() >= next || (lc->child_done && lc->child)) {
			struct tacho_live_frame *f;
			err = tacho_live_sample(lc->live, &f);
			if (err) {
				snprintf(t->ui.message, sizeof(t->ui.message), "cannot count: %s",
					 tacho_strerror(err));
			} else if (!t->ui.paused || !t->frame) {
				tacho_live_frame_put(t->frame);
				t->frame = f;
				t->ui.frame = f;
			} else {
				tacho_live_frame_put(f);   /* paused: the screen keeps its frame */
			}
			if (live_cli_reap(lc) && lc->argv) {
				char how[128];
				snprintf(t->ui.message, sizeof(t->ui.message), "'%s' %s", lc->argv[0],
					 tacho_exit_describe(&lc->exit, how, sizeof(how)));
			}
			next += lc->interval;
			if (next < live_now())
				next = live_now() + lc->interval;
			redraw = true;
		}
		if (redraw)
			top_draw(&t->ui);
	}
	/* the terminal as it was, whatever ended the loop */
	endwin();
	t->ui.frame = NULL;
	return GO_ON;
}

static int cmd_top_fn(int argc, char **argv)
{
	struct top_cli t;
	struct cli_signals saved;
	int ret;

	memset(&t, 0, sizeof(t));
	live_cli_init(&t.lc, &cmd_top);
	cli_write_opts_init(&t.wo);
	t.fmt = TACHO_FORMAT_TABLE;
	ret = top_parse(&t, argc, argv);
	if (ret == GO_ON) {
		/* wide characters for the sparklines where the locale has UTF-8; numbers
		 * stay in the C locale */
		setlocale(LC_CTYPE, "");
		if (strcmp(nl_langinfo(CODESET), "UTF-8"))
			t.ui.ascii = true;
		ret = live_cli_start(&t.lc, argc, argv);
	}
	if (ret == GO_ON) {
		live_cli_target(&t.lc, t.target, sizeof(t.target));
		t.ui.target = t.lc.pid || t.lc.argv || t.lc.ncgroups ? t.target : NULL;
		/* Ctrl-C and kill end the loop, restore the terminal, report */
		cli_stop_signals_catch(&saved);
		ret = t.batch ? top_batch(&t) : top_screen(&t);
		cli_stop_signals_restore(&saved);
	}
	if (ret == GO_ON)
		ret = live_cli_status(&t.lc);
	tacho_live_frame_put(t.frame);
	symbols_close(&t);
	tacho_evlist_free(t.symev);
	if (t.out && t.outpath)
		cli_close_output(t.out, t.outpath);
	live_cli_exit(&t.lc);
	return ret;
}

const struct cli_cmd cmd_top = {
	.name = "top",
	.fn = cmd_top_fn,
	.summary = "event rates live per process, thread, CPU or cgroup, with their history",
	.usage = top_usage,
	.options = top_options,
	.help_col = 26,
	.stop_at_operand = true,
	.footer = top_footer,
};
