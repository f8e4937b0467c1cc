/* hint.c - the tacho command's words for the library's hints (enum tacho_hint): the
 * library says where to look next as data and never names a command; this is the one
 * place that names one. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_hint_text(enum tacho_hint hint)
{
	switch (hint) {
	case TACHO_HINT_MACHINE:
		return "see 'tacho doctor'";
	case TACHO_HINT_EVENTS:
		return "see 'tacho list'";
	case TACHO_HINT_SCHEDULE:
		return "'tacho stat' schedules groups that fit";
	case TACHO_HINT_RING_PAGES:
		return "'tacho record -m' sets the ring's size";
	default:
		return NULL;
	}
}

const char *cli_hinted(const char *sentence, enum tacho_hint hint)
{
	static __thread char buf[1200];
	const char *words = cli_hint_text(hint);
	size_t n;

	if (!sentence || !words)
		return sentence;
	n = strlen(sentence);
	/* the library's sentences end with what to do, in parentheses: the hint is one
	 * more thing to do */
	if (n && sentence[n - 1] == ')')
		snprintf(buf, sizeof(buf), "%.*s; %s)", (int)(n - 1), sentence, words);
	else
		snprintf(buf, sizeof(buf), "%s (%s)", sentence, words);
	return buf;
}
