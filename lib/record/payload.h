/* payload.h - the payloads of tracepoint samples (PERF_SAMPLE_RAW) decoded with
 * libtraceevent from the format text the record file keeps for each event. */
#ifndef TACHO_RECORD_PAYLOAD_H
#define TACHO_RECORD_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

struct tc_payload;   /* the decoders of one recording's tracepoint events */

/* One field of a payload, as tc_payload_fields gives it. */
struct tc_payload_field {
	const char *name;
	const char *type;     /* its C type as the format says ("const char *") */
	bool is_string;       /* str/len (a char array or a __data_loc string) */
	bool is_signed;       /* num is an int64_t */
	bool is_pointer;      /* num is an address (a field whose C type has a '*') */
	const char *str;      /* not NUL-terminated: len bytes, up to the first NUL */
	size_t len;
	uint64_t num;
};

/* An empty set of decoders. 0 or -ENOMEM. */
int tc_payload_new(struct tc_payload **out);
/* Accepts NULL. */
void tc_payload_free(struct tc_payload *p);
/* Parses the format text (tracefs's events/SYS/NAME/format) of the recording's event
 * index `event`, once tc_tpformat_check (tpformat-check.h) finds it of the kernel's
 * shape: the text is never handed to libtraceevent otherwise. 0, -ENOMEM,
 * -TACHO_EPARSE (not of the kernel's shape, or not a format libtraceevent reads:
 * tc_payload_refusal says which), or -TACHO_EOUTOFRANGE for an index past 65535. A
 * second text for one event is ignored (0). */
int tc_payload_add(struct tc_payload *p, uint32_t event, const char *text, size_t len);
/* Why the last tc_payload_add gave -TACHO_EPARSE, as the end of a sentence about the
 * text: "is not one the kernel writes: REASON" or "is one libtraceevent cannot read"
 * (lowercase, no full stop; "" after a call that did not refuse). */
const char *tc_payload_refusal(const struct tc_payload *p);
/* Whether the event has a parsed format. */
bool tc_payload_has(const struct tc_payload *p, uint32_t event);
/* Whether an event has a string argument, a "const char *" field (a system call's
 * file name): its payloads hold the string's address, which tc_profile_const_str may
 * turn into the string. Accepts NULL. */
bool tc_payload_has_str_args(const struct tc_payload *p);
/* Appends the payload as the event's print format says it (what perf script shows
 * after the event's name: "dfd: 0xffffff9c, filename: 0x..."). 0; -ENOENT when the
 * event has no format; -TACHO_ECORRUPT when size bytes at raw are not a payload of that
 * event (shorter than its fields, another event's id, a string outside it). */
int tc_payload_print(struct tc_payload *p, uint32_t event, const void *raw, size_t size,
		     struct tc_sb *out);
/* Calls each(arg, field) for each field of the payload that is not one of the common
 * ones, in the format's order; stops at a nonzero return and returns it. 0, -ENOENT,
 * -TACHO_ECORRUPT as tc_payload_print. */
int tc_payload_fields(struct tc_payload *p, uint32_t event, const void *raw, size_t size,
		      int (*each)(void *arg, const struct tc_payload_field *f), void *arg);
/* The number in field `name` (sign-extended for signed fields). 0, -ENOENT (no such
 * event or field, or a field that is not a number), -TACHO_ECORRUPT. */
int tc_payload_num(struct tc_payload *p, uint32_t event, const void *raw, size_t size,
		   const char *name, uint64_t *val);

/* --- string arguments that the binaries' constants hold (report-export.c) --- */

struct tacho_profile;
/* The recording at path as a profile, for tc_profile_const_str (a trace's loader reads
 * its mappings so). 0, or tacho_profile_load's errors. Free it with tc_profile_close. */
int tc_profile_open(const char *path, struct tacho_profile **out);
void tc_profile_close(struct tacho_profile *p);
/* The string at address addr of process pid at time (the recording's clock), where it
 * lies in a read-only section of a binary the process had mapped by then (allocated
 * PROGBITS, neither writable nor code: a string constant). 0 and the string in buf (cut
 * to max - 1 bytes), or -ENOENT. Not thread-safe on one profile. */
int tc_profile_const_str(struct tacho_profile *p, uint32_t pid, uint64_t time, uint64_t addr,
			 char *buf, size_t max);

#endif
