/* parse.h - what the files of the event grammar share: the parser's state, its tokens
 * (token.c: columns in errors, numbers, name characters, modifiers, the events being
 * built), the resolvers (resolve.c: names of every source and tracepoint patterns;
 * resolve-probe.c: breakpoints and uprobes) and the spec's structure (parse.c), below
 * the list object (evlist.c). Calls go one way: evlist -> parse -> resolvers -> token. */
#ifndef TACHO_EVENTS_PARSE_H
#define TACHO_EVENTS_PARSE_H

#include "events/events.h"
#include "tacho/errors.h"

struct tc_parser {
	const char *src;
	size_t len;
	const struct tc_events_ctx *ctx;
	struct tacho_diag *diag;
	struct tc_event *ev;   /* the events parsed so far, appended to the list at the end */
	size_t n, alloc;
};

/* --- token.c --- */
/* Sets *p->diag to an error at 0-based offset off of the spec (column off + 1) and
 * returns err. */
int tc_perr(struct tc_parser *p, size_t off, int err, const char *fmt, ...) TC_PRINTF(4, 5);
/* An empty event (size set, no unit, scale 1, no group), and freeing what one owns. */
void tc_event_init(struct tc_event *ev);
void tc_event_exit(struct tc_event *ev);
/* Appends ev to the parser's events (which then own its strings). 0 or -ENOMEM. */
int tc_push_event(struct tc_parser *p, struct tc_event *ev);
bool tc_is_alnum(char c);
/* A character of an event name: letters, digits, _ - . : = */
bool tc_name_char(char c);
/* s[0..len) as an unsigned number (0x hex or decimal), as tc_parse_u64. */
int tc_parse_num(const char *s, size_t len, uint64_t *out);
/* Whether s[0..len) is non-empty and all modifier letters. */
bool tc_all_modifier_chars(const char *s, size_t len);
/* Applies src[off..off+len) as modifiers to ev, or reports the bad letter's column. */
int tc_modifiers(struct tc_parser *p, struct tc_event *ev, size_t off, size_t len);

/* --- resolve.c --- */
/* A name without '/': generic, cache, raw, tracepoint or libpfm4, with modifiers after
 * the last ':' when they are all modifier letters; the best error when nothing knows it. */
int tc_parse_named(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev);
/* Whether src[start..start+len) is a name tc_parse_named resolves (without modifiers),
 * quietly: for perf's terms on a named event, NAME/period=N/. */
bool tc_lookup_named(struct tc_parser *p, size_t start, size_t len);
/* Whether s[0..len) holds a shell wildcard (* ? [): a tracepoint pattern. */
bool tc_has_glob(const char *s, size_t len);
/* SUBSYS:NAME[:MODS] with wildcards: one event per matching tracepoint, pushed. */
int tc_parse_tracepoint_glob(struct tc_parser *p, size_t start, size_t end);

/* --- resolve-probe.c --- */
/* The length of "uprobe:" or "uretprobe:" at start, or 0. */
size_t tc_uprobe_prefix(const struct tc_parser *p, size_t start);
int tc_parse_breakpoint(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev);
int tc_parse_uprobe(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev);
/* The length of "sdt:" at start, or 0. */
size_t tc_sdt_prefix(const struct tc_parser *p, size_t start);
/* sdt:PATH:PROVIDER:NAME[:MODS]: a uprobe on the one site of that probe, its semaphore
 * as the ref_ctr_offset. */
int tc_parse_sdt(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev);

/* --- kprobe.c --- */
/* The length of "kprobe:" or "kretprobe:" at start, or 0. */
size_t tc_kprobe_prefix(const struct tc_parser *p, size_t start);
/* kprobe:SYMBOL[+OFF][:MODS], kretprobe:SYMBOL[:MODS]. */
int tc_parse_kprobe(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev);

/* --- parse.c --- */
/* The whole spec p->src into p->ev; group leaders are numbered from base (the events
 * the list already holds). 0 or an error with *p->diag set. */
int tc_parse_spec(struct tc_parser *p, size_t base);

#endif
