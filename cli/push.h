/* push.h - tacho stat --push and tacho record --push (push.c). */
#ifndef TACHO_CLI_PUSH_H
#define TACHO_CLI_PUSH_H

#include <stdbool.h>
#include <stddef.h>

#include "tacho.h"
#include "util/util.h"

struct cli_cmd;

#define CLI_PUSH_MAX_LABELS 16

/* What the options said. */
struct cli_push {
	const char *url;            /* --push; NULL: no push */
	const char *job;            /* --push-job (stat) */
	const char *name;           /* --push-name (record) */
	const char *format;         /* --push-format (record): "pprof" or "folded" */
	const char *labels[CLI_PUSH_MAX_LABELS];   /* --push-label NAME=VALUE */
	size_t nlabels;
	bool pyroscope;             /* record's: name and labels in Pyroscope's syntax */
	struct tc_http_url u;       /* url, parsed by cli_push_check */
};

/* --push-label NAME=VALUE: 0, or EXIT_USAGE (said), also for a NAME among reserved
 * (NULL-terminated, or NULL for none). */
int cli_push_label_add(struct cli_push *p, const struct cli_cmd *cmd, const char *arg,
		       const char *const *reserved);
/* The labels a Pushgateway group may not have: the job's own, and those of tacho's
 * metrics (the Pushgateway writes a grouping label over a sample's own). */
extern const char *const cli_push_stat_reserved[];
/* After the options: the URL parsed, the other --push-* refused without --push, and
 * for Pyroscope the name and label values its NAME{k=v,...} can hold. 0 or EXIT_USAGE
 * (said). */
int cli_push_check(struct cli_push *p, const struct cli_cmd *cmd);
/* PUTs the counts to the Pushgateway at p->url, group job/JOB[/NAME/VALUE...].
 * EXIT_OK, or EXIT_FAIL with one line saying why (the server's answer: its status and
 * the first line of its body). */
int cli_push_stat(const struct cli_push *p, const struct tacho_stat *s);
/* POSTs the recording's profile to Pyroscope's /ingest (pprof or folded), covering
 * from..until (seconds since the Epoch). EXIT_OK or EXIT_FAIL (said). */
int cli_push_profile(const struct cli_push *p, const char *recording, long long from,
		     long long until);

#endif
