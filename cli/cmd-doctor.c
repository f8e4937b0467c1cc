/* cmd-doctor.c - `tacho doctor`: what this machine and this user let tacho measure, and
 * for every limitation what to do about it; then the clocks, their resolution and cost. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_JSON = 256, OPT_NO_CLOCKS, OPT_VERIFY, OPT_REQUIRE };

static const char doctor_usage[] =
	"usage: tacho doctor [--json] [--no-clocks] [--verify] [--require SOURCE,...]\n"
	"\n"
	"Says what this machine allows and why, one line each: a hardware PMU or not (and\n"
	"which), the counters a task gets, a virtual machine or not, perf_event_paranoid and\n"
	"what it means for this user, the capabilities, whether software events, hardware\n"
	"breakpoints and tracepoints open, tracefs, user-space RDPMC, /dev/cpu/N/msr, the\n"
	"NMI watchdog, perf_event_mlock_kb, perf_event_max_sample_rate, the time-stamp\n"
	"counter and the kernel's clocksource. Every limitation ends with what to do, in\n"
	"parentheses. Then every clock a program can read (the TSC and the clock_gettime\n"
	"clocks) with its resolution and the measured cost of one read (a median).\n"
	"\n"
	"Between them, every source tacho calls exact (data and execute breakpoints, page\n"
	"faults, tracepoints, uprobes, kprobes, the PMU's instructions and branches) with\n"
	"its proof: a known number of known events made and counted, once per boot. A\n"
	"source that opens but does not count exactly here is never shown as a number.\n"
	"\n";

static const struct cli_option doctor_options[] = {
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON object: {\"version\": 1, \"checks\": [{\"key\", \"title\",\n"
	  "\"state\", \"value\", \"text\"}], \"clocks\": [{\"name\",\n"
	  "\"resolution_ns\", \"read_ns\", \"error\"}]} (docs/doctor.md)" },
	{ OPT_NO_CLOCKS, 0, "no-clocks", NULL,
	  "skip the clock survey (it takes some milliseconds)" },
	{ OPT_VERIFY, 0, "verify", NULL,
	  "prove every source again now (not this boot's proofs) and check the\n"
	  "hardware counters where a PMU exists: RDPMC against read(2), multiplexed\n"
	  "estimates against an exact count, precise sampling and its skid, the\n"
	  "depth of the last-branch records" },
	{ OPT_REQUIRE, 0, "require", "SOURCE,...",
	  "exit 1 unless each named source counts exactly here (breakpoint-data,\n"
	  "breakpoint-exec, page-faults, tracepoint, uprobe, kprobe, instructions,\n"
	  "branches): a gate for a CI runner or a new machine" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char doctor_footer[] =
	"Each check's state is ok, limited (something cannot be measured here: the line\n"
	"says what to do) or info.\n"
	"\n"
	"exit status: 0 the checks ran (limitations are not failures), 1 they could not\n"
	"run or a source --require names is not exact here, 2 bad usage\n";

/* The sources of a --require list, as a mask of enum tacho_source. 0, or EXIT_USAGE
 * (said). */
static int parse_require(const char *list, unsigned *mask)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		enum tacho_source s = n ? tacho_source_parse(p, n) : TACHO_SOURCE_NONE;

		if (s == TACHO_SOURCE_NONE)
			return cli_usage_error(&cmd_doctor, "--require: no source '%.*s' (the "
					       "sources: breakpoint-data, breakpoint-exec, "
					       "page-faults, tracepoint, uprobe, kprobe, "
					       "instructions, branches)", (int)n, p);
		*mask |= 1u << s;
		p += n + (p[n] == ',');
	}
	return 0;
}

static int run_doctor(int argc, char **argv);

const struct cli_cmd cmd_doctor = {
	.name = "doctor",
	.fn = run_doctor,
	.summary = "what this machine lets tacho measure, and what to do about the rest",
	.usage = doctor_usage,
	.options = doctor_options,
	.help_col = 20,
	.stop_at_operand = true,
	.footer = doctor_footer,
};

static int run_doctor(int argc, char **argv)
{
	struct cli_args args;
	struct tacho_clock_info clocks[TACHO_CLOCK_SURVEY_MAX];
	struct tacho_check *checks;
	struct tacho_machine_view view = {
		.sz = sizeof(view), .check_sz = sizeof(*checks), .clock_sz = sizeof(clocks[0]),
	};
	struct tacho_source_proof sources[TACHO_SOURCE_COUNT];
	struct tacho_check verify[8];
	struct tacho_write_opts wo;
	bool json = false, no_clocks = false, verifying = false;
	unsigned required = 0;
	int opt, n, nk = 0, ns, nv = 0, err, ret = EXIT_OK;

	cli_args_init(&args, &cmd_doctor, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_NO_CLOCKS:
			no_clocks = true;
			break;
		case OPT_VERIFY:
			verifying = true;
			break;
		case OPT_REQUIRE:
			if (parse_require(optarg, &required))
				return EXIT_USAGE;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (optind < argc)
		return cli_usage_error(&cmd_doctor, "unexpected argument '%s'", argv[optind]);

	n = tacho_machine_check_alloc(&checks, sizeof(*checks));
	if (n < 0) {
		cli_error("cannot examine this machine: %s", tacho_strerror(n));
		return EXIT_FAIL;
	}
	if (!no_clocks) {
		nk = tacho_clock_survey(clocks, ARRAY_SIZE(clocks), sizeof(*clocks));
		if (nk < 0) {
			cli_warn("cannot survey the clocks: %s", tacho_strerror(nk));
			nk = 0;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++)
		sources[i] = (struct tacho_source_proof){ .sz = sizeof(sources[i]) };
	ns = tacho_machine_sources(verifying ? TACHO_PROVE_FRESH : 0, sources, ARRAY_SIZE(sources),
				   sizeof(sources[0]));
	if (ns < 0 || (size_t)ns > ARRAY_SIZE(sources))
		ns = 0;
	if (verifying) {
		nv = tacho_machine_verify(verify, ARRAY_SIZE(verify), sizeof(verify[0]));
		if (nv < 0 || (size_t)nv > ARRAY_SIZE(verify))
			nv = 0;
	}
	cli_write_opts_init(&wo);
	view.checks = checks;
	view.nchecks = (size_t)n;
	view.clocks = clocks;
	view.nclocks = (size_t)nk;
	view.sources = sources;
	view.nsources = (size_t)ns;
	view.source_sz = sizeof(sources[0]);
	view.verify = verify;
	view.nverify = (size_t)nv;
	err = tacho_machine_write(&view, stdout, json ? TACHO_FORMAT_JSON : TACHO_FORMAT_TABLE,
				  &wo);
	free(checks);
	/* a write error is told once, by main's check of standard output */
	if (err && err != -EIO)
		cli_error("cannot write the checks: %s", tacho_strerror(err));
	for (int i = 0; i < ns; i++) {
		if (!(required & (1u << sources[i].source)) ||
		    sources[i].verdict == TACHO_VERDICT_EXACT)
			continue;
		cli_error("%s is required to count exactly, and is %s here%s%s",
			  tacho_source_name(sources[i].source),
			  tacho_verdict_name(sources[i].verdict), sources[i].why[0] ? ": " : "",
			  sources[i].why);
		ret = EXIT_FAIL;
	}
	return err ? EXIT_FAIL : ret;
}
