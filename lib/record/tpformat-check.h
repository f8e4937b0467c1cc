/* tpformat-check.h - the shape of a tracepoint format text (tracefs's
 * events/SYS/NAME/format) checked before libtraceevent reads it: a file may carry any
 * bytes there, and the library's parser is not safe on all of them. */
#ifndef TACHO_RECORD_TPFORMAT_CHECK_H
#define TACHO_RECORD_TPFORMAT_CHECK_H

#include <stddef.h>

/* The longest format text accepted (the kernel's longest, with their __print_symbolic
 * tables, are a few KiB). */
#define TC_TPFORMAT_MAX (256u * 1024u)

/* Whether text (len bytes, NULs at its end ignored) has the shape the kernel writes:
 *
 *   name: NAME\n ID: DIGITS\n format:\n
 *   then field lines "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;\n" (signed:
 *   optional, as before Linux 2.6.33) and blank lines,
 *   then "print fmt: ", a string literal and its arguments, to the end.
 *
 * Printable ASCII, tabs and newlines only (a string literal may hold newlines:
 * ext4_fc_stats's does), lines bounded, quotes closed, (), [] and {} balanced and nested
 * at most 32 deep. After the ']' of a non-empty subscript, and after the last operand
 * of a '?:', the next token must be one of , ) : or an operator libtraceevent ranks
 * (+ - * / % << >> < > <= >= == != & ^ | && || ? ! ~ ++ --): on any other one there
 * (a[1][2], a[1].b, a[1]->b, c ? x : y[1], a[1] $ b; no kernel writes them)
 * libtraceevent 1.7 (Debian 12) follows a NULL pointer. Other tokens it does not know
 * it refuses safely, and they pass. 0, -ENOMEM, or -TACHO_EPARSE with a one-line
 * reason in why (lowercase, no full stop; why may be NULL). */
int tc_tpformat_check(const char *text, size_t len, char *why, size_t why_size);

#endif
