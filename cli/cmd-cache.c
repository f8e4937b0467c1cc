/* cmd-cache.c - `tacho cache`: measures the memory hierarchy (the latency curve, the
 * levels found on it, bandwidths, the TLBs' reach) and holds it against what CPUID and
 * sysfs claim; prints the table, CSV or JSON, and draws the curve as SVG. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_JSON = 256, OPT_CSV, OPT_SVG, OPT_MIN, OPT_MAX, OPT_POINTS, OPT_SAMPLES, OPT_ROUNDS,
       OPT_THOROUGH, OPT_NO_BW, OPT_NO_TLB };

static const char cache_usage[] =
	"usage: tacho cache [-C <cpu>] [--thorough] [--json | --csv] [--svg <file>]\n"
	"                   [--min <size>] [--max <size>] [--points <n>] [--samples <n>]\n"
	"                   [--rounds <n>] [--no-bandwidth] [--no-tlb] [-o <file>]\n"
	"\n"
	"Measures the memory hierarchy instead of believing it: a pointer chase over working\n"
	"sets from 4 KiB to beyond the last cache draws the load-to-use latency curve; its\n"
	"plateaus are the levels and its knees their sizes, each put beside what CPUID and\n"
	"sysfs claim for the CPU it ran on, with a flag where they disagree by more than\n"
	"the sweep's resolution. Then main memory's latency, the read, write and copy\n"
	"bandwidth of every level (one thread, and one on every CPU), and the TLBs' reach\n"
	"from a chase with one load per page. A default run takes a few seconds.\n"
	"\n";

static const struct cli_option cache_options[] = {
	{ 'C', 'C', "cpu", "<cpu>",
	  "measure on this CPU (default: the one tacho starts on)" },
	{ OPT_THOROUGH, 0, "thorough", NULL,
	  "8 points per octave, 21 samples a point, 5 rounds, and a curve\n"
	  "with the TLB's misses in it (takes several times longer)" },
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON object: the levels, memory, TLBs, every curve and how\n"
	  "the run went (docs/schemas.md#cache)" },
	{ OPT_CSV, 0, "csv", NULL,
	  "CSV: a row per point, level, TLB and warning" },
	{ OPT_SVG, 0, "svg", "<file>",
	  "also draw the latency curve with the levels and the claimed\n"
	  "sizes marked, as an SVG picture" },
	{ OPT_MIN, 0, "min", "<size>",
	  "the smallest working set (default 4K; sizes take K, M, G)" },
	{ OPT_MAX, 0, "max", "<size>",
	  "the largest (default: 4x the largest cache claimed, at least\n"
	  "64M, at most 1G)" },
	{ OPT_POINTS, 0, "points", "<n>",
	  "points per octave, 1 to 16 (default 4): the resolution of the\n"
	  "sizes found is one step, 2^(1/n)" },
	{ OPT_SAMPLES, 0, "samples", "<n>",
	  "timed samples per point, 1 to 255 (default 9)" },
	{ OPT_ROUNDS, 0, "rounds", "<n>",
	  "sweeps of each curve, 1 to 15 (default 3): each point keeps its\n"
	  "lowest, so that a stretch of disturbance spoils one sweep only" },
	{ OPT_NO_BW, 0, "no-bandwidth", NULL, "skip the bandwidths" },
	{ OPT_NO_TLB, 0, "no-tlb", NULL, "skip the page chase (no TLB levels)" },
	{ 'o', 'o', "output", "<file>", "write the table, CSV or JSON there" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char cache_footer[] =
	"The measurement pins itself to one CPU, retakes samples during which it was\n"
	"switched out, and says in its warnings what may have disturbed it (steal time,\n"
	"other tasks, a changing clock). docs/cache.md states the method.\n"
	"\n"
	"exit status: 0 measured, 1 the measurement or a write failed, 2 bad usage\n";

static int run_cache(int argc, char **argv);

const struct cli_cmd cmd_cache = {
	.name = "cache",
	.fn = run_cache,
	.summary = "measure the caches, memory and TLBs, and hold them against CPUID",
	.usage = cache_usage,
	.options = cache_options,
	.help_col = 24,
	.footer = cache_footer,
};

static int bad_size(const char *opt, const char *arg, const struct tacho_diag *d)
{
	return cli_usage_error(&cmd_cache, "bad %s '%s': %s", opt, arg, d->message);
}

/* A number in [lo, hi] for an option, or a usage error. */
static int number(const char *opt, const char *arg, uint64_t lo, uint64_t hi, unsigned *out)
{
	uint64_t v;

	if (tc_parse_u64(arg, &v) || v < lo || v > hi)
		return cli_usage_error(&cmd_cache, "%s wants a whole number from %" PRIu64 " to %"
				       PRIu64 ", not '%s'", opt, lo, hi, arg);
	*out = (unsigned)v;
	return 0;
}

/* "0-1,4": the CPUs this process may run on, for the message of a bad -C. */
static void allowed_list(char *buf, size_t size)
{
	cpu_set_t set;
	size_t o = 0;
	int start = -1;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int c = 0; c <= CPU_SETSIZE && o + 16 < size; c++) {
		bool in = c < CPU_SETSIZE && CPU_ISSET(c, &set);

		if (in && start < 0)
			start = c;
		if (!in && start >= 0) {
			o += (size_t)snprintf(buf + o, size - o, "%s%d", o ? "," : "", start);
			if (c - 1 > start)
				o += (size_t)snprintf(buf + o, size - o, "-%d", c - 1);
			start = -1;
		}
	}
}

struct progress {
	bool on;
	int shown;
};

static void show_progress(void *arg, const char *phase, double done)
{
	struct progress *p = arg;
	int pct = (int)(done * 100);

	if (!p->on || pct == p->shown)
		return;
	p->shown = pct;
	fprintf(stderr, "\rtacho cache: %-9s %3d %%", phase, pct);
	fflush(stderr);
}

static int run_cache(int argc, char **argv)
{
	struct cli_args args;
	struct tacho_cache_opts o = { .sz = sizeof(o) };
	struct tacho_cache_result *r = NULL;
	struct tacho_write_opts wo;
	struct progress prog = { .on = isatty(STDERR_FILENO) != 0, .shown = -1 };
	struct tacho_diag d = { .sz = sizeof(d) };
	const char *svg = NULL, *out = NULL;
	enum tacho_format fmt = TACHO_FORMAT_TABLE;
	FILE *f;
	bool no_bw = false, no_tlb = false;
	int opt, err, ret;

	cli_args_init(&args, &cmd_cache, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case 'C': {
			uint64_t n;
			cpu_set_t set;
			char list[256];

			if (tc_parse_u64(optarg, &n) || n >= CPU_SETSIZE)
				return cli_usage_error(&cmd_cache, "-C wants one CPU number, not '%s'",
						       optarg);
			if (!sched_getaffinity(0, sizeof(set), &set) && !CPU_ISSET((int)n, &set)) {
				allowed_list(list, sizeof(list));
				return cli_usage_error(&cmd_cache, "CPU %" PRIu64 " is not one this "
						       "process may run on (%s)", n, list);
			}
			o.pin_cpu = true;
			o.cpu = (int)n;
			break;
		}
		case OPT_THOROUGH:
			o.thorough = true;
			break;
		case OPT_JSON:
			fmt = TACHO_FORMAT_JSON;
			break;
		case OPT_CSV:
			fmt = TACHO_FORMAT_CSV;
			break;
		case OPT_SVG:
			svg = optarg;
			break;
		case OPT_MIN:
		case OPT_MAX: {
			uint64_t *v = opt == OPT_MIN ? &o.min_bytes : &o.max_bytes;
			const char *name = opt == OPT_MIN ? "--min" : "--max";

			if (tc_parse_size(optarg, v, &d))
				return bad_size(name, optarg, &d);
			if (*v < 4096 || *v > (1ull << 30))
				return cli_usage_error(&cmd_cache, "bad %s '%s': sizes go from 4K to 1G",
						       name, optarg);
			break;
		}
		case OPT_POINTS:
			if (number("--points", optarg, 1, 16, &o.points_per_octave))
				return EXIT_USAGE;
			break;
		case OPT_SAMPLES:
			if (number("--samples", optarg, 1, 255, &o.samples))
				return EXIT_USAGE;
			break;
		case OPT_ROUNDS:
			if (number("--rounds", optarg, 1, 15, &o.rounds))
				return EXIT_USAGE;
			break;
		case OPT_NO_BW:
			no_bw = true;
			break;
		case OPT_NO_TLB:
			no_tlb = true;
			break;
		case 'o':
			out = optarg;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (optind < argc)
		return cli_usage_error(&cmd_cache, "unexpected argument '%s'", argv[optind]);
	if (o.min_bytes && o.max_bytes && o.min_bytes > o.max_bytes)
		return cli_usage_error(&cmd_cache, "--min is larger than --max");
	if (svg && out && !strcmp(svg, out))
		return cli_usage_error(&cmd_cache, "--svg and -o name the same file");

	o.what = TACHO_CACHE_LATENCY | (no_bw ? 0 : TACHO_CACHE_BANDWIDTH) |
		 (no_tlb ? 0 : TACHO_CACHE_TLB);
	o.progress = show_progress;
	o.progress_arg = &prog;
	err = tacho_cache_measure(&o, &r);
	if (prog.on && prog.shown >= 0)
		fprintf(stderr, "\r%40s\r", "");
	if (err) {
		if (err == -EINVAL && o.pin_cpu)
			cli_error("cannot measure on CPU %d: it is not online or not allowed", o.cpu);
		else
			cli_error("cannot measure the memory hierarchy: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}

	cli_write_opts_init(&wo);
	ret = EXIT_OK;
	if (svg) {
		f = cli_open_output(svg);
		if (!f) {
			ret = EXIT_FAIL;
		} else {
			err = tacho_cache_write_svg(r, f, &wo);
			if (err && err != -EIO)
				cli_error("cannot draw the curve: %s", tacho_strerror(err));
			if (cli_close_output(f, svg) != EXIT_OK || err)
				ret = EXIT_FAIL;
		}
	}
	f = cli_open_output(out);
	if (!f) {
		tacho_cache_result_free(r);
		return EXIT_FAIL;
	}
	err = tacho_cache_write(r, f, fmt, &wo);
	tacho_cache_result_free(r);
	/* a write error is told once, by the close (or main's check of stdout) */
	if (err && err != -EIO) {
		cli_error("cannot write the result: %s", tacho_strerror(err));
		ret = EXIT_FAIL;
	}
	if (f != stdout && cli_close_output(f, out) != EXIT_OK)
		ret = EXIT_FAIL;
	return err ? EXIT_FAIL : ret;
}
