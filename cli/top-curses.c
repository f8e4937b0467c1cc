/* top-curses.c - loads ncurses for tacho top's screen (top-curses.h says why with
 * dlopen): every function and variable the screen uses, or a one-line error. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

#define TOP_CURSES_IMPL
#include "top-curses.h"
#include "cli.h"

/* the soname of the wide-character ncurses 6 (Debian's libncursesw6) */
#define CURSES_SONAME "libncursesw.so.6"

struct top_curses top_curses;

int top_curses_load(void)
{
	static const struct { const char *name; size_t off; } fn[] = {
#define F(x) { #x, offsetof(struct top_curses, x) }
		F(initscr), F(endwin), F(cbreak), F(noecho), F(keypad), F(nodelay),
		F(curs_set), F(set_escdelay), F(getch), F(erase), F(move), F(refresh),
		F(attron), F(attroff), F(mvaddnstr), F(mvaddstr), F(addstr), F(addch),
		F(printw),
#undef F
		{ "stdscr", offsetof(struct top_curses, stdscr_p) },
		{ "LINES", offsetof(struct top_curses, lines_p) },
		{ "COLS", offsetof(struct top_curses, cols_p) },
	};
	static bool loaded;
	void *h;

	if (loaded)
		return 0;
	h = dlopen(CURSES_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		cli_error("the screen needs ncurses: %s cannot be loaded (%s); Debian: apt-get "
			  "install libncursesw6, or use -b for lines of text", CURSES_SONAME,
			  dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(fn) / sizeof(fn[0]); i++) {
		void *p = dlsym(h, fn[i].name);

		if (!p) {
			cli_error("the screen needs ncurses: %s lacks '%s'", CURSES_SONAME,
				  fn[i].name);
			dlclose(h);
			return -1;
		}
		/* a function's or a variable's address, stored where its typed pointer
		 * lives (the POSIX way of turning dlsym's pointer into either) */
		*(void **)((char *)&top_curses + fn[i].off) = p;
	}
	loaded = true;   /* kept loaded for the life of the process */
	return 0;
}
