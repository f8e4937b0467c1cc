/* cmd-doctor.c - `tacho doctor`: what this machine and this user let tacho measure, and
 * for every limitation what to do about it; then the clocks, their resolution and cost. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output/output.h"
#include "util/util.h"

static const char doctor_help[] =
	"usage: tacho doctor [--json] [--no-clocks]\n"
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
	"options:\n"
	"    --json          one JSON object: {\"version\": 1, \"checks\": [{\"key\", \"title\",\n"
	"                    \"state\", \"value\", \"text\"}], \"clocks\": [{\"name\",\n"
	"                    \"resolution_ns\", \"read_ns\", \"error\"}]} (docs/doctor.md)\n"
	"    --no-clocks     skip the clock survey (it takes some milliseconds)\n"
	"    -h, --help      this text\n"
	"\n"
	"Each check's state is ok, limited (something cannot be measured here: the line\n"
	"says what to do) or info.\n"
	"\n"
	"exit status: 0 the checks ran (limitations are not failures), 1 they could not\n"
	"run, 2 bad usage\n";

static int get_checks(struct tacho_check **out)
{
	struct tacho_check *c = NULL;
	size_t max = 24;
	int n;

	for (;;) {
		struct tacho_check *nc = realloc(c, max * sizeof(*c));
		if (!nc) {
			free(c);
			return -ENOMEM;
		}
		c = nc;
		n = tacho_machine_check(c, max);
		if (n < 0 || (size_t)n <= max)
			break;
		max = (size_t)n;
	}
	if (n < 0) {
		free(c);
		return n;
	}
	*out = c;
	return n;
}

/* 0.385 ns, 24.4 ns, 4 ms: the unit that keeps the number short */
static void fmt_ns(double ns, char *buf, size_t size)
{
	if (ns >= 1e9)
		snprintf(buf, size, "%.3g s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%.3g ms", ns / 1e6);
	else if (ns >= 1e4)
		snprintf(buf, size, "%.3g us", ns / 1e3);
	else
		snprintf(buf, size, "%.3g ns", ns);
}

static void print_text(const struct tacho_check *c, int n, const struct tacho_clock_info *k,
		       int nk)
{
	struct tc_table *t = tc_table_new(4);
	char res[64], cost[64];

	printf("what this machine lets tacho measure:\n\n");
	if (t) {
		for (int i = 0; i < n; i++) {
			const char *cells[4] = { tacho_check_state_name(c[i].state), c[i].title,
						 c[i].value, c[i].text };
			tc_table_add(t, cells);
		}
		tc_table_print(t, stdout, 2, 2);
		tc_table_free(t);
	}
	if (nk <= 0)
		return;
	printf("\nclocks (resolution; cost of one read, the median of many):\n\n");
	t = tc_table_new(3);
	if (!t)
		return;
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 2, true);
	{
		const char *hdr[3] = { "clock", "resolution", "one read" };
		tc_table_add(t, hdr);
	}
	for (int i = 0; i < nk; i++) {
		if (k[i].err) {
			snprintf(res, sizeof(res), "-");
			snprintf(cost, sizeof(cost), "cannot read: %s", tacho_strerror(k[i].err));
		} else {
			fmt_ns(k[i].resolution_ns, res, sizeof(res));
			fmt_ns(k[i].read_ns, cost, sizeof(cost));
		}
		const char *cells[3] = { k[i].name, res, cost };
		tc_table_add(t, cells);
	}
	tc_table_print(t, stdout, 2, 3);
	tc_table_free(t);
}

static void print_json(const struct tacho_check *c, int n, const struct tacho_clock_info *k,
		       int nk)
{
	struct tc_json j;

	tc_json_init(&j, stdout, true);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_arr_begin(&j, "checks");
	for (int i = 0; i < n; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "key", c[i].key);
		tc_json_str(&j, "title", c[i].title);
		tc_json_str(&j, "state", tacho_check_state_name(c[i].state));
		tc_json_str(&j, "value", c[i].value);
		tc_json_str(&j, "text", c[i].text);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "clocks");
	for (int i = 0; i < nk; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", k[i].name);
		if (k[i].err) {
			tc_json_null(&j, "resolution_ns");
			tc_json_null(&j, "read_ns");
			tc_json_str(&j, "error", tacho_strerror(k[i].err));
		} else {
			tc_json_double(&j, "resolution_ns", k[i].resolution_ns);
			tc_json_double(&j, "read_ns", k[i].read_ns);
			tc_json_null(&j, "error");
		}
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	tc_json_finish(&j);
}

static int run_doctor(int argc, char **argv);

const struct cli_cmd cmd_doctor = {
	.name = "doctor",
	.fn = run_doctor,
	.summary = "what this machine lets tacho measure, and what to do about the rest",
	.help = doctor_help,
};

static int run_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-clocks", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tacho_clock_info clocks[TACHO_CLOCK_SURVEY_MAX];
	struct tacho_check *checks;
	bool json = false, no_clocks = false;
	int opt, n, nk = 0;

	opterr = 0;     /* cli_bad_option says it once, with the usage */
	while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'C':
			no_clocks = true;
			break;
		case 'h':
			return cli_help(&cmd_doctor);
		default:
			return cli_bad_option(&cmd_doctor, argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error(&cmd_doctor, "unexpected argument '%s'", argv[optind]);

	n = get_checks(&checks);
	if (n < 0) {
		cli_error("cannot examine this machine: %s", tacho_strerror(n));
		return EXIT_FAIL;
	}
	for (int i = 0; i < n; i++)
		if (checks[i].hint != TACHO_HINT_NONE)   /* the hint, in this command's words */
			snprintf(checks[i].text, sizeof(checks[i].text), "%s",
				 cli_hinted(checks[i].text, checks[i].hint));
	if (!no_clocks) {
		nk = tacho_clock_survey(clocks, ARRAY_SIZE(clocks));
		if (nk < 0) {
			cli_warn("cannot survey the clocks: %s", tacho_strerror(nk));
			nk = 0;
		}
	}
	if (json)
		print_json(checks, n, clocks, nk);
	else
		print_text(checks, n, clocks, nk);
	free(checks);
	return EXIT_OK;
}
