/* payload.c - tracepoint payloads decoded with libtraceevent: the format text the file
 * keeps for each event parsed once, each payload checked against it before any field is
 * read (a damaged file must not make the decoder read past the payload). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "record/payload.h"
#include "record/tpformat-check.h"
#include "tacho/errors.h"

#define MAX_EVENTS 65536u   /* a record's event index is 16 bits */

/* One tep handle per event, so that two formats with the same id (a file that says
 * so) can never decode each other's payloads. */
struct tc_payload {
	struct tep_handle **tep;
	struct tep_event **ev;
	size_t n;
	char why[192];   /* why the last tc_payload_add refused its text */
};

int tc_payload_new(struct tc_payload **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	/* libtraceevent warns on stderr by default; the library never prints */
	tep_set_loglevel(TEP_LOG_NONE);
	return 0;
}

void tc_payload_free(struct tc_payload *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		if (p->tep[i])
			tep_free(p->tep[i]);
	free(p->tep);
	free(p->ev);
	free(p);
}

int tc_payload_add(struct tc_payload *p, uint32_t event, const char *text, size_t len)
{
	struct tep_handle *tep;
	struct tep_event *ev = NULL;
	char reason[128];
	int err;

	if (event >= MAX_EVENTS)
		return -TACHO_EOUTOFRANGE;
	if (event >= p->n) {
		size_t n = event + 1;
		struct tep_handle **t = realloc(p->tep, n * sizeof(*t));
		if (!t)
			return -ENOMEM;
		p->tep = t;
		struct tep_event **e = realloc(p->ev, n * sizeof(*e));
		if (!e)
			return -ENOMEM;
		p->ev = e;
		memset(p->tep + p->n, 0, (n - p->n) * sizeof(*t));
		memset(p->ev + p->n, 0, (n - p->n) * sizeof(*e));
		p->n = n;
	}
	if (p->tep[event]) {   /* a second format for one event: the first holds */
		return 0;
	}
	p->why[0] = 0;
	/* libtraceevent's parser is not safe on every text (tpformat-check.h): only the
	 * shape the kernel writes reaches it */
	err = tc_tpformat_check(text, len, reason, sizeof(reason));
	if (err) {
		snprintf(p->why, sizeof(p->why), "is not one the kernel writes: %s", reason);
		return err;
	}
	tep = tep_alloc();
	if (!tep)
		return -ENOMEM;
	/* the recordings are x86-64's: 8-byte longs, little-endian (docs/record-format.md) */
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	if (tep_parse_format(tep, &ev, text, len, "tracepoint") != 0 || !ev) {
		tep_free(tep);
		snprintf(p->why, sizeof(p->why), "is one libtraceevent cannot read");
		return -TACHO_EPARSE;
	}
	p->tep[event] = tep;
	p->ev[event] = ev;
	return 0;
}

const char *tc_payload_refusal(const struct tc_payload *p)
{
	return p->why;
}

bool tc_payload_has(const struct tc_payload *p, uint32_t event)
{
	return p && event < p->n && p->ev[event];
}

bool tc_payload_has_str_args(const struct tc_payload *p)
{
	for (size_t i = 0; p && i < p->n; i++)
		for (const struct tep_format_field *f = p->ev[i] ? p->ev[i]->format.fields : NULL;
		     f; f = f->next)
			if (f->type && !strcmp(f->type, "const char *"))
				return true;
	return false;
}

/* Where a dynamic field's bytes are: the u32 at its offset holds their offset (low 16
 * bits; relative to the field's end with TEP_FIELD_IS_RELATIVE) and length. */
static bool dyn_span(const struct tep_format_field *f, const unsigned char *raw, size_t size,
		     size_t *off, size_t *len)
{
	uint32_t loc;

	if (f->offset < 0 || f->size < 4 || (size_t)f->offset + 4 > size)
		return false;
	memcpy(&loc, raw + f->offset, 4);
	*off = loc & 0xffff;
	*len = loc >> 16;
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		*off += (size_t)f->offset + (size_t)f->size;
	return *off <= size && *len <= size - *off;
}

static bool field_fits(const struct tep_format_field *f, const unsigned char *raw, size_t size)
{
	size_t off, len;

	if (f->flags & TEP_FIELD_IS_DYNAMIC)
		return dyn_span(f, raw, size, &off, &len);
	return f->offset >= 0 && f->size >= 0 && (size_t)f->offset + (size_t)f->size <= size;
}

/* The event's decoder, once the payload is known to be one of it: every field inside,
 * the common type its id. */
static int checked(struct tc_payload *p, uint32_t event, const void *raw, size_t size,
		   struct tep_event **out)
{
	struct tep_event *ev;
	uint16_t type;

	if (!tc_payload_has(p, event))
		return -ENOENT;
	ev = p->ev[event];
	if (size < 2)
		return -TACHO_ECORRUPT;
	memcpy(&type, raw, 2);
	if (type != (uint16_t)ev->id)
		return -TACHO_ECORRUPT;
	for (const struct tep_format_field *f = ev->format.common_fields; f; f = f->next)
		if (!field_fits(f, raw, size))
			return -TACHO_ECORRUPT;
	for (const struct tep_format_field *f = ev->format.fields; f; f = f->next)
		if (!field_fits(f, raw, size))
			return -TACHO_ECORRUPT;
	*out = ev;
	return 0;
}

int tc_payload_print(struct tc_payload *p, uint32_t event, const void *raw, size_t size,
		     struct tc_sb *out)
{
	struct tep_record rec = { 0 };
	struct tep_event *ev;
	struct trace_seq s;
	int err = checked(p, event, raw, size, &ev);

	if (err)
		return err;
	rec.data = (void *)raw;   /* read, never written */
	rec.size = (int)size;
	rec.record_size = (int)size;
	rec.cpu = -1;
	trace_seq_init(&s);
	tep_print_event(p->tep[event], &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	if (s.state != TRACE_SEQ__GOOD)
		err = -ENOMEM;
	else
		tc_sb_add(out, s.buffer, s.len);
	trace_seq_destroy(&s);
	return err ? err : out->oom ? -ENOMEM : 0;
}

static bool is_char_array(const struct tep_format_field *f)
{
	return (f->flags & TEP_FIELD_IS_STRING) ||
	       ((f->flags & TEP_FIELD_IS_ARRAY) && f->type && strstr(f->type, "char"));
}

static int read_field(const struct tep_format_field *f, const unsigned char *raw, size_t size,
		      struct tc_payload_field *out)
{
	unsigned long long v;

	memset(out, 0, sizeof(*out));
	out->name = f->name;
	out->type = f->type ? f->type : "";
	if (is_char_array(f)) {
		size_t off = (size_t)f->offset, len = (size_t)f->size;
		if ((f->flags & TEP_FIELD_IS_DYNAMIC) && !dyn_span(f, raw, size, &off, &len))
			return -TACHO_ECORRUPT;
		out->is_string = true;
		out->str = (const char *)raw + off;
		out->len = strnlen(out->str, len);
		return 0;
	}
	if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) ||
	    tep_read_number_field((struct tep_format_field *)f, raw, &v))
		return -ENOENT;   /* an array of numbers: not one value */
	out->num = v;
	out->is_signed = f->flags & TEP_FIELD_IS_SIGNED;
	out->is_pointer = (f->flags & TEP_FIELD_IS_POINTER) || (f->type && strchr(f->type, '*'));
	/* sign-extend what the field's size holds */
	if (out->is_signed && f->size > 0 && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		out->num = v | ~((1ull << (f->size * 8)) - 1);
	return 0;
}

int tc_payload_fields(struct tc_payload *p, uint32_t event, const void *raw, size_t size,
		      int (*each)(void *arg, const struct tc_payload_field *f), void *arg)
{
	struct tep_event *ev;
	int err = checked(p, event, raw, size, &ev);

	if (err)
		return err;
	for (const struct tep_format_field *f = ev->format.fields; f; f = f->next) {
		struct tc_payload_field pf;

		err = read_field(f, raw, size, &pf);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		err = each(arg, &pf);
		if (err)
			return err;
	}
	return 0;
}

int tc_payload_num(struct tc_payload *p, uint32_t event, const void *raw, size_t size,
		   const char *name, uint64_t *val)
{
	struct tep_event *ev;
	int err = checked(p, event, raw, size, &ev);

	if (err)
		return err;
	for (const struct tep_format_field *f = ev->format.fields; f; f = f->next) {
		struct tc_payload_field pf;

		if (strcmp(f->name, name))
			continue;
		err = read_field(f, raw, size, &pf);
		if (err)
			return err;
		if (pf.is_string)
			return -ENOENT;
		*val = pf.num;
		return 0;
	}
	return -ENOENT;
}
