/* serve.h - what tacho serve's files share. */
#ifndef TACHO_CLI_SERVE_H
#define TACHO_CLI_SERVE_H

/* The page at / (serve-page.c). */
extern const char serve_page[];

#endif
