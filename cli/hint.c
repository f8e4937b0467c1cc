/* hint.c - the tacho command's words for the library's hints (enum tacho_hint): the
 * library says where to look next as data and never names a command; this is the one
 * place that names one. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output/output.h"

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
	case TACHO_HINT_CACHE:
		return "'tacho cache' measures it";
	case TACHO_HINT_MSRS:
		return "see 'tacho msr list'";
	case TACHO_HINT_SIMULATE:
		return "'tacho stat --sim' simulates it under valgrind";
	default:
		return NULL;
	}
}

const char *cli_hinted(const char *sentence, enum tacho_hint hint)
{
	static __thread char buf[1200];

	return tc_hinted(sentence, cli_hint_text(hint), buf, sizeof(buf));
}
