/* top-curses.h - ncurses for tacho top's screen, loaded with dlopen when the screen
 * starts (top-curses.c). Include it instead of <ncurses.h>: the functions the screen
 * calls, and stdscr, LINES and COLS, become the loaded library's through a table, so
 * that the tacho binary does not link ncurses and no other command pays its start-up
 * (ncursesw with tinfo: some 500 symbol relocations, 0.19 ms of CPU at every exec on
 * this machine, bench/libcost.sh). */
#ifndef TACHO_CLI_TOP_CURSES_H
#define TACHO_CLI_TOP_CURSES_H

/* functions, not ncurses' macros over stdscr: each name below is then one symbol of
 * the library, looked up once */
#define NCURSES_NOMACROS
#include <ncurses.h>

struct top_curses {
	__typeof__(initscr) *initscr;
	__typeof__(endwin) *endwin;
	__typeof__(cbreak) *cbreak;
	__typeof__(noecho) *noecho;
	__typeof__(keypad) *keypad;
	__typeof__(nodelay) *nodelay;
	__typeof__(curs_set) *curs_set;
	__typeof__(set_escdelay) *set_escdelay;
	__typeof__(getch) *getch;
	__typeof__(erase) *erase;
	__typeof__(move) *move;
	__typeof__(refresh) *refresh;
	__typeof__(attron) *attron;
	__typeof__(attroff) *attroff;
	__typeof__(mvaddnstr) *mvaddnstr;
	__typeof__(mvaddstr) *mvaddstr;
	__typeof__(addstr) *addstr;
	__typeof__(addch) *addch;
	__typeof__(printw) *printw;
	WINDOW **stdscr_p;
	int *lines_p, *cols_p;
};

extern struct top_curses top_curses;

/* Loads libncursesw.so.6 (once; the handle stays open). 0, or -1 after a one-line
 * error (cli_error) that says what is missing. Not thread-safe: top's one thread. */
int top_curses_load(void);

#ifndef TOP_CURSES_IMPL
#define initscr (top_curses.initscr)
#define endwin (top_curses.endwin)
#define cbreak (top_curses.cbreak)
#define noecho (top_curses.noecho)
#define keypad (top_curses.keypad)
#define nodelay (top_curses.nodelay)
#define curs_set (top_curses.curs_set)
#define set_escdelay (top_curses.set_escdelay)
#define getch (top_curses.getch)
#define erase (top_curses.erase)
#define move (top_curses.move)
#define refresh (top_curses.refresh)
#define attron (top_curses.attron)
#define attroff (top_curses.attroff)
#define mvaddnstr (top_curses.mvaddnstr)
#define mvaddstr (top_curses.mvaddstr)
#define addstr (top_curses.addstr)
#define addch (top_curses.addch)
#define printw (top_curses.printw)
#undef stdscr
#undef LINES
#undef COLS
#define stdscr (*top_curses.stdscr_p)
#define LINES (*top_curses.lines_p)
#define COLS (*top_curses.cols_p)
#endif

#endif
