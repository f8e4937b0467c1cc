/* write.c - what the result writers share: their options with defaults, the words of
 * hints, JSON documents in either layout, CSV rows. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "output/output.h"
#include "util/util.h"
#include "tacho/output.h"

/* Every field of the options is optional: the first version is sz alone. */
#define TC_OPTS_V1_tacho_write_opts tc_offsetofend(struct tacho_write_opts, sz)

int tc_write_settings_get(const struct tacho_write_opts *o, enum tacho_format fmt,
			  struct tc_write_settings *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->sep = ',';
	out->header = true;
	if ((unsigned)fmt >= TACHO_FORMAT_COUNT)
		return -EINVAL;
	err = TC_OPTS_VALID(o, tacho_write_opts);
	if (err || !o)
		return err;
	if (TC_OPTS_HAS(o, tacho_write_opts, csv_sep) && o->csv_sep)
		out->sep = o->csv_sep;
	if (TC_OPTS_HAS(o, tacho_write_opts, csv_no_header))
		out->header = !o->csv_no_header;
	if (TC_OPTS_HAS(o, tacho_write_opts, json_compact))
		out->compact = o->json_compact;
	if (TC_OPTS_HAS(o, tacho_write_opts, hint_arg)) {
		out->hint_words = o->hint_words;
		out->hint_arg = o->hint_arg;
	}
	/* a separator that CSV quoting cannot protect would make the rows unreadable */
	if (out->sep == '"' || out->sep == '\n' || out->sep == '\r')
		return -EINVAL;
	return 0;
}

const char *tc_hint_words(const struct tc_write_settings *w, enum tacho_hint hint)
{
	const char *s;

	if (!w->hint_words || hint == TACHO_HINT_NONE || (unsigned)hint >= TACHO_HINT_COUNT)
		return NULL;
	s = w->hint_words(w->hint_arg, hint);
	return s && *s ? s : NULL;
}

const char *tc_hinted(const char *sentence, const char *words, char *buf, size_t size)
{
	size_t n;

	if (!sentence || !words || !*words || !size)
		return sentence;
	n = strlen(sentence);
	if (n && sentence[n - 1] == ')')
		snprintf(buf, size, "%.*s; %s)", (int)(n - 1), sentence, words);
	else
		snprintf(buf, size, "%s (%s)", sentence, words);
	return buf;
}

const char *tc_hinted_w(const struct tc_write_settings *w, const char *sentence,
			enum tacho_hint hint, char *buf, size_t size)
{
	return tc_hinted(sentence, tc_hint_words(w, hint), buf, size);
}

void tc_json_doc_begin(struct tc_json *j, FILE *f, enum tacho_format fmt,
		       const struct tc_write_settings *w)
{
	tc_json_init(j, f, fmt == TACHO_FORMAT_JSON && !w->compact);
}

int tc_json_doc_end(struct tc_json *j)
{
	int err = tc_json_finish(j);

	if (!j->pretty)
		fputc('\n', j->f);
	return err ? err : tc_write_status(j->f);
}

void tc_csv_row(FILE *f, const struct tc_write_settings *w, const char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tc_csv_field(f, w->sep, i == 0, fields[i]);
	tc_csv_end(f);
}

enum tacho_format tc_format_of_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	if (n >= 5 && !strcmp(path + n - 5, ".json"))
		return TACHO_FORMAT_JSON;
	if (n >= 4 && !strcmp(path + n - 4, ".csv"))
		return TACHO_FORMAT_CSV;
	return TACHO_FORMAT_TABLE;
}

int tc_write_status(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}
