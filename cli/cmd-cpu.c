/* cmd-cpu.c - `tacho cpu`: what the processor is, from CPUID (live or a dump), checked
 * against what the kernel says. */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_JSON = 256, OPT_RAW, OPT_LOAD, OPT_CPU, OPT_NO_CROSSCHECK, OPT_TSC };

static const char cpu_usage[] =
	"usage: tacho cpu [--json | --raw] [--load <file>] [--cpu <n>] [--no-crosscheck]\n"
	"\n"
	"Says what the processor is, from CPUID: vendor, brand, family/model/stepping,\n"
	"microarchitecture, hypervisor, topology and hybrid core types, caches and TLBs\n"
	"(with the leaf each value came from), performance monitoring, the time-stamp\n"
	"counter and the feature flags. On this machine it reads every online CPU and\n"
	"cross-checks with /sys/devices/system/cpu, saying where the two disagree, and\n"
	"what CPUID cannot tell.\n"
	"\n";

static const struct cli_option cpu_options[] = {
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON object (docs/cpu.md gives the schema)" },
	{ OPT_RAW, 0, "raw", NULL,
	  "the raw leaves of every CPU in the format of `cpuid -r`;\n"
	  "`tacho cpu --load` reads them back" },
	{ OPT_LOAD, 0, "load", "<file>",
	  "decode a dump taken elsewhere: `cpuid -r`, `tacho cpu --raw`,\n"
	  "libcpuid, AIDA64 or InstLatx64 format (no cross-check then)" },
	{ OPT_CPU, 0, "cpu", "<n>",
	  "only logical CPU n (the kernel's number; for a dump\n"
	  "without numbers, its position from 0)" },
	{ OPT_NO_CROSSCHECK, 0, "no-crosscheck", NULL,
	  "do not compare with /sys and /proc/cpuinfo" },
	{ OPT_TSC, 0, "tsc", NULL,
	  "measure the TSC's frequency where CPUID and sysfs do not give it:\n"
	  "the kernel's conversion (one perf event) and a 20 ms calibration" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char cpu_footer[] =
	"exit status: 0 done, 1 CPUID or the dump could not be read, 2 bad usage\n";

struct cpu_opts {
	bool json, raw, crosscheck, tsc;
	const char *load;
	long cpu;                        /* -1: all */
};

/* --- getting the dump --- */

/* Keeps only CPU `cpu` (the kernel's number, or the position when the dump has none). */
static int select_cpu(struct tacho_cpuid_dump **dump, long cpu)
{
	struct tacho_cpuid_dump *one = NULL, *d = *dump;
	int err;

	if (cpu > INT_MAX) {
		cli_error("cannot select CPU %ld: no such CPU number", cpu);
		return -ENOENT;
	}
	err = tacho_cpuid_dump_select(d, (int)cpu, &one);
	if (err == -ENOENT) {
		cli_error("cannot select CPU %ld: the dump holds %u CPU%s (see 'tacho cpu --raw')",
			  cpu, tacho_cpuid_dump_ncpus(d), tacho_cpuid_dump_ncpus(d) == 1 ? "" : "s");
		return err;
	}
	if (err) {
		cli_error("cannot select CPU %ld: %s", cpu, tacho_strerror(err));
		return err;
	}
	tacho_cpuid_dump_free(d);
	*dump = one;
	return 0;
}

static int get_dump(const struct cpu_opts *o, struct tacho_cpuid_dump **dump)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	if (o->load) {
		err = tacho_cpuid_dump_load(o->load, dump, &diag);
		if (err) {
			char where[600];
			if (diag.message[0])
				tacho_diag_format(&diag, where, sizeof(where));
			else
				snprintf(where, sizeof(where), "%s: %s", o->load, tacho_strerror(err));
			cli_error("cannot load %s", where);   /* where names the file */
			return err;
		}
	} else {
		err = tacho_cpuid_dump_live(dump);
		if (err) {
			cli_error("cannot read CPUID: %s%s", tacho_strerror(err),
				  err == -TACHO_ENOTX86 ? " (try 'tacho cpu --load FILE' with a dump)" : "");
			return err;
		}
	}
	if (o->cpu >= 0)
		return select_cpu(dump, o->cpu);
	return 0;
}

static int cmd_cpu_fn(int argc, char **argv)
{
	struct cli_args args;
	struct cpu_opts o = { .crosscheck = true, .cpu = -1 };
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	struct tacho_tsc_info tsc = { .sz = sizeof(tsc) };
	struct tacho_cpu_sysfs *sys = NULL;
	struct tacho_cpu_crosscheck x = { .sz = sizeof(x) };
	struct tacho_cpu_view v = { .sz = sizeof(v), .info = &info };
	struct tacho_write_opts wo;
	struct tacho_cpuid_dump *dump = NULL;
	char decoded[64];
	int c, err, ret = EXIT_FAIL;

	cli_args_init(&args, &cmd_cpu, argc, argv);
	while ((c = cli_args_next(&args)) > 0) {
		switch (c) {
		case OPT_JSON: o.json = true; break;
		case OPT_RAW: o.raw = true; break;
		case OPT_LOAD: o.load = optarg; break;
		case OPT_NO_CROSSCHECK: o.crosscheck = false; break;
		case OPT_TSC: o.tsc = true; break;
		case OPT_CPU: {
			uint64_t n;
			if (tc_parse_u64(optarg, &n) || n > 65535)
				return cli_usage_error(&cmd_cpu, "--cpu wants a CPU number, not '%s'", optarg);
			o.cpu = (long)n;
			break;
		}
		}
	}
	if (c < 0)
		return args.exit;
	if (optind < argc)
		return cli_usage_error(&cmd_cpu, "unexpected argument '%s'", argv[optind]);
	if (o.json && o.raw)
		return cli_usage_error(&cmd_cpu, "--json and --raw cannot be used together");

	if (get_dump(&o, &dump)) {
		tacho_cpuid_dump_free(dump);   /* --cpu may fail after the dump was read */
		return EXIT_FAIL;
	}
	if (o.raw) {
		err = tacho_cpuid_dump_write_raw(dump, stdout);
		tacho_cpuid_dump_free(dump);
		return err ? EXIT_FAIL : EXIT_OK;
	}

	info = (struct tacho_cpu_info){ .sz = sizeof(info) };
	v.live = !o.load;
	if (o.cpu >= 0) {
		snprintf(decoded, sizeof(decoded), "CPU %ld only (--cpu)", o.cpu);
		v.decoded = decoded;
	}
	err = tacho_cpu_decode(dump, &info);
	if (err) {
		cli_error("cannot decode %s%s%s: %s", o.load ? "'" : "the CPUID of this machine",
			  o.load ? o.load : "", o.load ? "'" : "", tacho_strerror(err));
		goto out;
	}
	if (v.live) {
		/* The library's TSC facts (section 5): without --tsc only what costs no
		 * perf event and no sleep; with it the kernel's conversion and a
		 * calibration, which CPUID alone cannot give. */
		err = o.tsc ? tacho_tsc_info(&tsc) : tacho_tsc_info_quick(&tsc);
		if ((err == 0 || tsc.present) && tsc.hz > 0) {
			v.tsc_hz = tsc.hz;
			v.tsc_source = tsc.source;
			v.tsc_kernel_hz = tsc.kernel_hz;
			v.tsc_calibrated_hz = tsc.calibrated_hz;
		}
		else if (!o.tsc)
			v.tsc_unmeasured = "--tsc measures it";
		if (!o.crosscheck)
			v.crosscheck_skipped = "--no-crosscheck";
		else
			v.sysfs_err = tacho_cpu_sysfs_read_for(NULL, &info, &sys);
		if (!v.sysfs_err && sys) {
			err = tacho_cpu_crosscheck(&info, sys, &x);
			if (err) {
				cli_error("cannot cross-check with the kernel: %s", tacho_strerror(err));
				goto out;
			}
			v.crosscheck = &x;
			/* one CPU alone cannot be held against the kernel's counts */
			if (o.cpu >= 0) {
				unsigned k = 0;
				for (unsigned i = 0; i < x.n; i++) {
					const char *w = x.items[i].what;
					if (strcmp(w, "threads") && strcmp(w, "cores") &&
					    strcmp(w, "packages") && strcmp(w, "threads per package"))
						x.items[k++] = x.items[i];
				}
				x.n = k;
			}
		}
		v.sysfs = sys;
	}
	cli_write_opts_init(&wo);
	err = tacho_cpu_write(&v, stdout, o.json ? TACHO_FORMAT_JSON : TACHO_FORMAT_TABLE, &wo);
	/* a write error is told once, by main's check of standard output */
	if (err && err != -EIO)
		cli_error("cannot describe the CPU: %s", tacho_strerror(err));
	ret = err ? EXIT_FAIL : EXIT_OK;
out:
	if (v.crosscheck)
		tacho_cpu_crosscheck_exit(&x);
	tacho_cpu_sysfs_free(sys);
	tacho_cpu_info_exit(&info);
	tacho_cpuid_dump_free(dump);
	return ret;
}

const struct cli_cmd cmd_cpu = {
	.name = "cpu",
	.fn = cmd_cpu_fn,
	.summary = "what the processor is: CPUID decoded, checked against the kernel",
	.usage = cpu_usage,
	.options = cpu_options,
	.help_col = 24,
	.footer = cpu_footer,
};
