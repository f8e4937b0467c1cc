/* cmd-list.c - `tacho list`: the events this machine's CPU and kernel offer, grouped by
 * where they come from, and whether this process may open each one here. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_SOURCE = 256, OPT_JSON, OPT_NO_PROBE };

static const char list_usage[] =
	"usage: tacho list [<pattern>] [--source <src>[,<src>...]] [--json] [--no-probe]\n"
	"   or: tacho list sdt <file> [--json]\n"
	"\n"
	"Lists the events this machine's CPU and kernel offer, grouped by where they come\n"
	"from, with a description and whether this process can open each one here (tacho\n"
	"tries to open it counting on itself, then closes it; nothing is cached). When an\n"
	"event cannot be opened, a note under its group says why.\n"
	"\n"
	"Sources, in the order listed:\n"
	"    hardware     the kernel's generic hardware events (cycles, instructions, ...)\n"
	"    cache        the generic cache events (L1-dcache-load-misses, LLC-loads, ...)\n"
	"    software     the kernel's software events (task-clock, page-faults, ...)\n"
	"    pfm          CPU-specific events libpfm4 knows for this CPU's active PMUs\n"
	"    raw          the rNNNN syntax\n"
	"    pmu          other PMUs in /sys/bus/event_source/devices: their terms and events\n"
	"    tracepoint   kernel tracepoints; without a pattern or --source tracepoint,\n"
	"                 one line per subsystem\n"
	"    breakpoint   the mem:ADDR[/LEN][:rwx] syntax\n"
	"\n"
	"<pattern> selects events by name (and alias): a glob when it has * ? or [,\n"
	"else a case-insensitive substring.\n"
	"\n"
	"'tacho list sdt FILE' lists the SDT (USDT) probes of an executable or library:\n"
	"count one with -e sdt:FILE:PROVIDER:NAME.\n"
	"\n";

static const struct cli_option list_options[] = {
	{ OPT_SOURCE, 0, "source", "<src>",
	  "only these sources (comma-separated names from above)" },
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON document with every selected event (docs/list.md)" },
	{ OPT_NO_PROBE, 0, "no-probe", NULL,
	  "do not try to open the events" },
	{ 'v', 'v', "verbose", NULL,
	  "with events (as -e takes them) for <pattern>: the\n"
	  "event-select value perf programs for each, decoded\n"
	  "(docs/msr.md)" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char list_footer[] =
	"docs/events.md describes how to write events; docs/list.md this command.\n"
	"\n"
	"exit status: 0 listed (even if nothing matched), 2 bad usage\n";

/* "hardware,tracepoint" -> a mask of sources. 0 and *mask, or -1 with *bad and
 * *badlen naming the word that is not a source. */
static int parse_sources(const char *s, unsigned *mask, const char **bad, int *badlen)
{
	*mask = 0;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		unsigned src;

		for (src = 0; src < TACHO_EVENT_SRC_COUNT; src++) {
			const char *name = tacho_event_source_name(src);
			if (strlen(name) == n && !strncmp(name, s, n))
				break;
		}
		if (src == TACHO_EVENT_SRC_COUNT) {
			*bad = s;
			*badlen = (int)n;
			return -1;
		}
		*mask |= 1u << src;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

/* list -v: what perf programs for each event, in the register's words (cmd-msr.c). */
static int explain_events(const char *spec)
{
	struct tacho_evlist *list;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	if (!spec)
		return cli_usage_error(&cmd_list, "-v needs events (tacho list -v r1a8)");
	if (tacho_evlist_parse(spec, &list, &diag))
		return cli_event_error("event list", &diag);
	err = cli_msr_explain_events(list, stdout);
	tacho_evlist_free(list);
	return err ? EXIT_FAIL : EXIT_OK;
}

/* tacho list sdt FILE: the probe sites of a file's .note.stapsdt. */
static int list_sdt(const char *path, bool json)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_sdt_list *l = NULL;
	struct tacho_write_opts wo;
	int err = tacho_sdt_list_new(path, &l, &diag);

	if (err) {
		cli_error("cannot list the SDT probes of '%s': %s", path,
			  diag.message[0] ? diag.message : tacho_strerror(err));
		return EXIT_FAIL;
	}
	cli_write_opts_init(&wo);
	err = tacho_sdt_list_write(l, stdout, json ? TACHO_FORMAT_JSON : TACHO_FORMAT_TABLE, &wo);
	tacho_sdt_list_free(l);
	if (err && err != -EIO)
		cli_error("cannot list the SDT probes of '%s': %s", path, tacho_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}

static int cmd_list_fn(int argc, char **argv)
{
	struct cli_args args;
	struct tacho_event_listing_opts lo = { .sz = sizeof(lo) };
	struct tacho_event_listing *l = NULL;
	struct tacho_write_opts wo;
	bool json = false, verbose = false;
	const char *bad;
	int opt, err, badlen;

	cli_args_init(&args, &cmd_list, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case OPT_SOURCE:
			if (parse_sources(optarg, &lo.sources, &bad, &badlen))
				return cli_usage_error(&cmd_list, "unknown source '%.*s' (expected "
						       "hardware, cache, software, pfm, raw, pmu, "
						       "tracepoint or breakpoint)", badlen, bad);
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_NO_PROBE:
			lo.no_probe = true;
			break;
		case 'v':
			verbose = true;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (optind + 2 == argc && !strcmp(argv[optind], "sdt")) {
		if (lo.sources || lo.no_probe || verbose)
			return cli_usage_error(&cmd_list, "'list sdt' takes a file and --json");
		return list_sdt(argv[optind + 1], json);
	}
	if (optind < argc)
		lo.pattern = argv[optind++];
	if (optind < argc)
		return cli_usage_error(&cmd_list, "one pattern at most, not '%s'", argv[optind]);
	if (verbose)
		return explain_events(lo.pattern);

	err = tacho_event_listing_new(&lo, &l);
	if (err) {
		cli_error("cannot list events: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	cli_write_opts_init(&wo);
	err = tacho_event_listing_write(l, stdout, json ? TACHO_FORMAT_JSON : TACHO_FORMAT_TABLE,
					&wo);
	tacho_event_listing_free(l);
	/* a write error is told once, by main's check of standard output */
	if (err && err != -EIO)
		cli_error("cannot list events: %s", tacho_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}

const struct cli_cmd cmd_list = {
	.name = "list",
	.fn = cmd_list_fn,
	.summary = "list the events this machine offers and whether they open here",
	.usage = list_usage,
	.options = list_options,
	.help_col = 21,
	.footer = list_footer,
};
