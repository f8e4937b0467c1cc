/* cmd-msr.c - `tacho msr`: the model-specific registers tacho knows, read and decoded
 * through the msr driver (or a fake tree), written only where the table allows and only
 * with --force, saved and restored, and the frequency and power their counters give;
 * and the event-select view of events that `tacho list -v` and `tacho stat -v` print. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

enum {
	OPT_DECODE = 256, OPT_ALL, OPT_JSON, OPT_CSV, OPT_FORCE, OPT_DEVICE_DIR, OPT_CPUID,
	OPT_SYS_ROOT,
};

static const char msr_usage[] =
	"usage: tacho msr list [<pattern>] [--all] [--decode] [--json | --csv]\n"
	"   or: tacho msr read <msr> [-C <cpus> | -a] [--decode] [--json | --csv]\n"
	"   or: tacho msr decode <msr> (<value> | <field>=<value>[,...]) [--json | --csv]\n"
	"   or: tacho msr write <msr> (<value> | <field>=<value>[,...]) --force\n"
	"                       [-C <cpus> | -a] [--decode] [--json | --csv]\n"
	"   or: tacho msr save <file> [-C <cpus> | -a]\n"
	"   or: tacho msr restore <file> --force [--decode] [--json | --csv]\n"
	"   or: tacho msr (freq | power) [-C <cpus> | -a] [-i <ms>] [--json | --csv]\n"
	"\n"
	"Reads, decodes and, where it is safe, writes the model-specific registers of\n"
	"the CPUs through the kernel's msr driver (/dev/cpu/N/msr: modprobe msr, as\n"
	"root). <msr> is a name tacho knows (tacho msr list) or an address in hex (0x186,\n"
	"186h). Values are shown with their fields in words. A write changes what the CPU\n"
	"does for every program on it: tacho writes only the registers its table marks\n"
	"writable, only with --force, and reads each one back; `save` first lets\n"
	"`restore` undo it. `freq` and `power` read APERF/MPERF and the RAPL energy\n"
	"counters twice, -i apart. read, write, save, restore, freq and power also take\n"
	"--device-dir, --cpuid and --sys-root: another tree of devices (tests, a copy of\n"
	"a machine's registers) and the processor behind it; with /dev/cpu, the processor\n"
	"is always this machine's.\n"
	"\n";

static const struct cli_option msr_options[] = {
	{ 'C', 'C', "cpu", "<cpus>",
	  "these CPUs (0-3,8); default CPU 0 (save: every\n"
	  "CPU with a device; freq: all; restore: the file's)" },
	{ 'a', 'a', "all-cpus", NULL,
	  "every CPU that has a device" },
	{ OPT_DECODE, 0, "decode", NULL,
	  "show each value's fields in words (list: each\n"
	  "register's fields)" },
	{ OPT_ALL, 0, "all", NULL,
	  "list: every register, not only this CPU's" },
	{ OPT_FORCE, 0, "force", NULL,
	  "write or restore for real (without it, write says\n"
	  "what it would write and does nothing)" },
	{ 'i', 'i', "interval", "<ms>",
	  "freq, power: time between the reads (1000)" },
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON document (docs/schemas.md)" },
	{ OPT_CSV, 0, "csv", NULL,
	  "CSV with a header row" },
	{ OPT_DEVICE_DIR, 0, "device-dir", "<dir>",
	  "DIR/N/msr is CPU N's device (default /dev/cpu);\n"
	  "a regular file stands for one (docs/msr.md)" },
	{ OPT_CPUID, 0, "cpuid", "<file>",
	  "the processor is this CPUID dump's (tacho cpu --raw):\n"
	  "list, decode, or a fake tree (--device-dir)" },
	{ OPT_SYS_ROOT, 0, "sys-root", "<dir>",
	  "read /sys/kernel/security/lockdown and\n"
	  "/sys/module/msr under <dir> to explain a refusal" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char msr_footer[] =
	"docs/msr.md tells more: the registers, the save file, what this machine shows.\n"
	"\n"
	"exit status: 0 done, 1 a register could not be read or written (or a write was\n"
	"not forced), 2 bad usage, an unknown register or a bad value\n";

struct msr_cli {
	const char *sub;
	char **ops;
	int nops;
	const char *cpus_arg;
	bool all_cpus, decode, all, force;
	enum tacho_format fmt;
	bool fmt_set;
	unsigned interval;
	bool interval_set;
	const char *device_dir, *cpuid, *sys_root;
	struct tacho_msr_cpu cpu;       /* from --cpuid */
	struct tacho_msr_dev *dev;
	int *cpus;
	size_t ncpus;
	struct tacho_write_opts wo;
};

static const struct cli_cmd *self(void);

/* A step that does not end the command returns GO_ON; any other value is the exit
 * code. */
#define GO_ON (-1)

/* The largest save restore reads: about 900 bytes a CPU, 16,000 CPUs */
#define SAVE_MAX ((size_t)16 << 20)

/* --- parsing --- */

static int set_format(struct msr_cli *c, enum tacho_format fmt)
{
	if (c->fmt_set && c->fmt != fmt)
		return cli_usage_error(self(), "choose one output format: --json or --csv");
	c->fmt = fmt;
	c->fmt_set = true;
	return GO_ON;
}

/* Which options and how many operands go with which subcommand. */
static int check_options(struct msr_cli *c)
{
	static const struct {
		const char *sub;
		unsigned nops;
		bool cpus, decode, all, force, interval, device;
	} subs[] = {
		{ "list", 1, false, true, true, false, false, false },
		{ "read", 1, true, true, false, false, false, true },
		{ "decode", 2, false, true, false, false, false, false },
		{ "write", 2, true, true, false, true, false, true },
		{ "save", 1, true, false, false, false, false, true },
		{ "restore", 1, false, true, false, true, false, true },
		{ "freq", 0, true, false, false, false, true, true },
		{ "power", 0, true, false, false, false, true, true },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(subs); i++)
		if (!strcmp(c->sub, subs[i].sub))
			break;
	if (i == ARRAY_SIZE(subs))
		return cli_usage_error(self(), "unknown subcommand '%s' (list, read, decode, write, "
				       "save, restore, freq or power)", c->sub);
	if (!subs[i].cpus && (c->cpus_arg || c->all_cpus))
		return cli_usage_error(self(), "-C and -a do not go with %s", c->sub);
	if (c->cpus_arg && c->all_cpus)
		return cli_usage_error(self(), "-C and -a do not go together");
	if (!subs[i].decode && c->decode)
		return cli_usage_error(self(), "--decode does not go with %s", c->sub);
	if (!subs[i].all && c->all)
		return cli_usage_error(self(), "--all goes with list (-a: every CPU)");
	if (!subs[i].force && c->force)
		return cli_usage_error(self(), "--force goes with write and restore");
	if (!subs[i].interval && c->interval_set)
		return cli_usage_error(self(), "-i goes with freq and power");
	if (!subs[i].device && (c->device_dir || c->sys_root))
		return cli_usage_error(self(), "--device-dir and --sys-root do not go with %s",
				       c->sub);
	/* the processor behind the real devices is this machine's, always: a Pentium's
	 * register would pass the table's check and be written here at its address */
	if (subs[i].device && c->cpuid && !c->device_dir)
		return cli_usage_error(self(), "--cpuid names the processor of a fake tree: it "
				       "goes with --device-dir (with /dev/cpu the processor is "
				       "this machine's)");
	if (!strcmp(c->sub, "save") && c->fmt_set)
		return cli_usage_error(self(), "save writes its own format (docs/msr.md), not "
				       "JSON or CSV");
	/* list takes an optional pattern; the others exactly their operands */
	if (c->nops > (int)subs[i].nops || (strcmp(c->sub, "list") && c->nops < (int)subs[i].nops)) {
		if (c->nops < (int)subs[i].nops)
			return cli_usage_error(self(), "%s needs %s", c->sub,
					       subs[i].nops == 2 ? "a register and a value" :
					       !strcmp(c->sub, "read") ? "a register" : "a file");
		return cli_usage_error(self(), "unexpected argument '%s'", c->ops[subs[i].nops]);
	}
	return GO_ON;
}

static int msr_parse(struct msr_cli *c, int argc, char **argv)
{
	struct cli_args args;
	uint64_t v;
	int opt, err;

	cli_args_init(&args, self(), argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case 'C':
			c->cpus_arg = optarg;
			break;
		case 'a':
			c->all_cpus = true;
			break;
		case OPT_DECODE:
			c->decode = true;
			break;
		case OPT_ALL:
			c->all = true;
			break;
		case OPT_FORCE:
			c->force = true;
			break;
		case 'i':
			if (tc_parse_u64(optarg, &v) || v == 0 || v > 3600000)
				return cli_usage_error(self(), "bad interval '%s' (milliseconds, 1 to "
						       "3600000)", optarg);
			c->interval = (unsigned)v;
			c->interval_set = true;
			break;
		case OPT_JSON:
		case OPT_CSV:
			err = set_format(c, opt == OPT_JSON ? TACHO_FORMAT_JSON : TACHO_FORMAT_CSV);
			if (err != GO_ON)
				return err;
			break;
		case OPT_DEVICE_DIR:
			c->device_dir = optarg;
			break;
		case OPT_CPUID:
			c->cpuid = optarg;
			break;
		case OPT_SYS_ROOT:
			c->sys_root = optarg;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (optind >= argc)
		return cli_usage_error(self(), "which subcommand? (list, read, decode, write, save, "
				       "restore, freq or power)");
	c->sub = argv[optind];
	c->ops = argv + optind + 1;
	c->nops = argc - optind - 1;
	return check_options(c);
}

/* --- the processor, the devices, the CPUs --- */

/* The processor of --cpuid, or this machine's. 0 or EXIT_FAIL (told). */
static int get_cpu(struct msr_cli *c, struct tacho_msr_cpu *cpu)
{
	struct tacho_cpuid_dump *dump;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char where[600];
	int err;

	if (!c->cpuid) {
		/* off x86 the processor is unknown, which the table and the device say */
		err = tacho_msr_cpu_live(cpu);
		return err == -ENOMEM ? (cli_error("out of memory"), EXIT_FAIL) : 0;
	}
	err = tacho_cpuid_dump_load(c->cpuid, &dump, &diag);
	if (err) {
		if (diag.message[0])
			tacho_diag_format(&diag, where, sizeof(where));
		else
			snprintf(where, sizeof(where), "%s", tacho_strerror(err));
		cli_error("cannot load the CPUID dump '%s': %s", c->cpuid, where);
		return EXIT_FAIL;
	}
	err = tacho_msr_cpu_of_dump(dump, cpu);
	tacho_cpuid_dump_free(dump);
	if (err) {
		cli_error("cannot decode the CPUID dump '%s': %s", c->cpuid, tacho_strerror(err));
		return EXIT_FAIL;
	}
	return 0;
}

static int open_dev(struct msr_cli *c)
{
	struct tacho_msr_opts o = { .sz = sizeof(o), .device_dir = c->device_dir,
				    .sys_root = c->sys_root };
	int err;

	if (c->cpuid) {
		err = get_cpu(c, &c->cpu);
		if (err)
			return err;
		o.cpu = &c->cpu;
	}
	err = tacho_msr_dev_new(&o, &c->dev);
	if (err == -EINVAL && c->cpuid) {
		cli_error("cannot use the msr devices of %s with --cpuid: they are this "
			  "machine's, whose processor is its own", c->device_dir);
		return EXIT_FAIL;
	}
	if (err) {
		cli_error("cannot use the msr devices: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	return 0;
}

/* " (see 'tacho doctor')" for a hint, or "". */
static void hint_suffix(enum tacho_hint hint, char *buf, size_t size)
{
	const char *w = cli_hint_text(hint);

	snprintf(buf, size, "%s%s%s", w ? " (" : "", w ? w : "", w ? ")" : "");
}

/* The CPUs of -C or -a, or def (-1: every CPU with a device). 0 or an exit code. */
static int get_cpus(struct msr_cli *c, int def)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char why[768], hint[96];
	enum tacho_hint h;
	int err;

	if (c->cpus_arg) {
		if (tc_parse_cpu_list(c->cpus_arg, &c->cpus, &c->ncpus, &diag))
			return cli_usage_error(self(), "bad CPU list '%s' at column %u: %s",
					       c->cpus_arg, diag.column, diag.message);
		return 0;
	}
	if (!c->all_cpus && def >= 0) {
		c->cpus = malloc(sizeof(*c->cpus));
		if (!c->cpus) {
			cli_error("out of memory");
			return EXIT_FAIL;
		}
		c->cpus[0] = def;
		c->ncpus = 1;
		return 0;
	}
	err = tacho_msr_dev_cpus(c->dev, &c->cpus, &c->ncpus);
	if (err) {
		tacho_msr_explain(c->dev, err, 0, NULL, 0, false, why, sizeof(why), &h);
		hint_suffix(h, hint, sizeof(hint));
		cli_error("cannot find the CPUs' msr devices: %s%s", why, hint);
		return EXIT_FAIL;
	}
	return 0;
}

/* "IA32_PERFEVTSEL0", or "MSR 0x186" for an address the table does not know. */
static void reg_name(const struct tacho_msr *m, uint32_t address, char *buf, size_t size)
{
	if (m) {
		struct tacho_msr_info info = { .sz = sizeof(info) };
		tacho_msr_describe(m, &info);
		snprintf(buf, size, "%s", info.name);
	} else {
		snprintf(buf, size, "MSR 0x%x", address);
	}
}

/* Looks up <msr>: 0, or EXIT_USAGE (told, with the nearest names). */
static int lookup(const char *spec, const struct tacho_msr_cpu *cpu, const struct tacho_msr **m,
		  uint32_t *address)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char hint[96];
	int err;

	err = tacho_msr_lookup(spec, cpu, m, address, &diag);
	if (!err)
		return 0;
	hint_suffix(diag.hint, hint, sizeof(hint));
	cli_error("%s%s", diag.message[0] ? diag.message : tacho_strerror(err), hint);
	return EXIT_USAGE;
}

/* One line per distinct failure of the set's entries: "cannot VERB NAME on CPU N: why",
 * the CPUs that failed the same way counted after it. Returns how many failed. */
static size_t tell_failures(const struct tacho_msr_set *set, const char *verb)
{
	size_t failed = 0, n = tacho_msr_set_count(set);
	bool *told = calloc(n ? n : 1, sizeof(*told));

	/* what was printed comes first, also when both go to one pipe */
	fflush(stdout);
	for (size_t i = 0; i < n; i++) {
		struct tacho_msr_entry e = { .sz = sizeof(e) }, o = { .sz = sizeof(o) };
		char name[64], hint[96];
		size_t same = 0;

		tacho_msr_set_entry(set, i, &e);
		if (!e.err)
			continue;
		failed++;
		if (told && told[i])
			continue;
		for (size_t k = i + 1; told && k < n; k++) {
			tacho_msr_set_entry(set, k, &o);
			if (o.err == e.err && !told[k]) {
				told[k] = true;
				same++;
			}
		}
		reg_name(e.msr, e.address, name, sizeof(name));
		hint_suffix(e.hint, hint, sizeof(hint));
		if (same)
			cli_error("cannot %s %s on CPU %d: %s%s (and on %zu more CPU%s the same way)",
				  verb, name, e.cpu, e.why, hint, same, same == 1 ? "" : "s");
		else
			cli_error("cannot %s %s on CPU %d: %s%s", verb, name, e.cpu, e.why, hint);
	}
	free(told);
	return failed;
}

/* Writes the set to stdout in the chosen format; EXIT_OK or EXIT_FAIL (told). */
static int print_set(struct msr_cli *c, const struct tacho_msr_set *set)
{
	int err = tacho_msr_set_write(set, stdout, c->fmt, &c->wo);

	/* a write error is told once, by main's check of standard output */
	if (err && err != -EIO)
		cli_error("cannot write the values: %s", tacho_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}

/* --- the subcommands --- */

static int do_list(struct msr_cli *c)
{
	struct tacho_msr_cpu cpu;
	const struct tacho_msr_cpu *which = NULL;
	int n, err;

	if (!c->all) {
		err = get_cpu(c, &cpu);
		if (err)
			return err;
		/* a processor tacho cannot name has no registers of its own: list them all */
		if (cpu.vendor != TACHO_VENDOR_UNKNOWN)
			which = &cpu;
	}
	n = tacho_msr_list_write(which, c->nops ? c->ops[0] : NULL,
				 c->decode ? TACHO_MSR_LIST_FIELDS : 0, stdout, c->fmt, &c->wo);
	if (n < 0) {
		if (n != -EIO)
			cli_error("cannot list the registers: %s", tacho_strerror(n));
		return EXIT_FAIL;
	}
	if (!n && c->fmt == TACHO_FORMAT_TABLE) {
		char who[160];
		tacho_msr_cpu_format(which, who, sizeof(who));
		if (c->nops)
			cli_warn("no register %smatches '%s'%s", which ? "of this processor " : "",
				 c->ops[0], which ? " (--all: every register)" : "");
		else
			cli_warn("tacho knows no register of %s (--all: every register)", who);
	}
	return EXIT_OK;
}

static int do_decode(struct msr_cli *c)
{
	struct tacho_msr_set *set = NULL;
	const struct tacho_msr *m;
	struct tacho_msr_cpu cpu;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	uint32_t address;
	uint64_t v;
	int err, ret;

	ret = get_cpu(c, &cpu);
	if (!ret)
		ret = lookup(c->ops[0], &cpu, &m, &address);
	if (ret)
		return ret;
	err = tacho_msr_assign(m, 0, c->ops[1], &v, &diag);
	if (err)
		return cli_event_error("value", &diag);
	if (tacho_msr_set_new(TACHO_MSR_SET_FIELDS, &set) ||
	    tacho_msr_set_add(set, -1, m, address, v, NULL)) {
		tacho_msr_set_free(set);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	ret = print_set(c, set);
	tacho_msr_set_free(set);
	return ret;
}

static int do_read(struct msr_cli *c)
{
	struct tacho_msr_set *set = NULL;
	const struct tacho_msr *m;
	uint32_t address;
	size_t failed;
	int ret;

	ret = open_dev(c);
	if (!ret)
		ret = lookup(c->ops[0], tacho_msr_dev_cpu(c->dev), &m, &address);
	if (!ret)
		ret = get_cpus(c, 0);
	if (ret)
		return ret;
	if (tacho_msr_set_new(c->decode ? TACHO_MSR_SET_FIELDS : 0, &set)) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	if (tacho_msr_set_rdmsr(set, c->dev, m, address, c->cpus, c->ncpus) == -ENOMEM) {
		tacho_msr_set_free(set);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	failed = tell_failures(set, "read");
	/* when every read failed the lines above are the whole answer */
	ret = failed < c->ncpus || c->fmt != TACHO_FORMAT_TABLE ? print_set(c, set) : EXIT_OK;
	tacho_msr_set_free(set);
	return failed ? EXIT_FAIL : ret;
}

static int do_write(struct msr_cli *c)
{
	struct tacho_msr_set *set = NULL;
	const struct tacho_msr *m;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char name[64], why[768], hint[96];
	enum tacho_hint h;
	uint32_t address;
	int ret, err;

	ret = open_dev(c);
	if (!ret)
		ret = lookup(c->ops[0], tacho_msr_dev_cpu(c->dev), &m, &address);
	if (!ret)
		ret = get_cpus(c, 0);
	if (ret)
		return ret;
	reg_name(m, address, name, sizeof(name));
	if (!m) {
		cli_error("cannot write %s: tacho writes only registers its table knows and "
			  "marks writable (see 'tacho msr list')", name);
		return EXIT_FAIL;
	}
	if (tacho_msr_set_new(c->decode ? TACHO_MSR_SET_FIELDS : 0, &set)) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	err = tacho_msr_set_wrmsr(set, c->dev, m, c->cpus, c->ncpus, c->ops[1],
				  c->force ? TACHO_MSR_FORCE : 0, &diag);
	switch (err) {
	case 0:
		ret = print_set(c, set);
		break;
	case -TACHO_EPARSE:
	case -TACHO_EOUTOFRANGE:
		ret = cli_event_error("value", &diag);
		break;
	case -TACHO_ENOWRITE:
	case -TACHO_EMSRCPU:
		tacho_msr_explain(c->dev, err, c->cpus[0], m, address, true, why, sizeof(why), &h);
		hint_suffix(h, hint, sizeof(hint));
		cli_error("cannot write %s: %s%s", name, why, hint);
		ret = EXIT_FAIL;
		break;
	case -TACHO_ENOFORCE:
		/* what would have been written, then why it was not */
		print_set(c, set);
		fflush(stdout);
		cli_error("not writing %s: a write changes what the CPU does for every program "
			  "on it (add --force)", name);
		ret = EXIT_FAIL;
		break;
	case -ENOMEM:
		cli_error("out of memory");
		ret = EXIT_FAIL;
		break;
	default:
		if (tacho_msr_set_count(set) > 1 || c->fmt != TACHO_FORMAT_TABLE)
			print_set(c, set);
		tell_failures(set, "write");
		ret = EXIT_FAIL;
		break;
	}
	tacho_msr_set_free(set);
	return ret;
}

static int do_save(struct msr_cli *c)
{
	const char *path = c->ops[0];
	struct tacho_msr_set *set = NULL;
	size_t absent = 0, n;
	FILE *f;
	int err, ret;

	ret = open_dev(c);
	if (!ret)
		ret = get_cpus(c, -1);
	if (ret)
		return ret;
	err = tacho_msr_save_read(c->dev, c->cpus, c->ncpus, &set);
	if (err == -TACHO_EMSRCPU) {
		char who[160];
		tacho_msr_cpu_format(tacho_msr_dev_cpu(c->dev), who, sizeof(who));
		cli_error("cannot save: tacho knows no writable register of %s", who);
		return EXIT_FAIL;
	}
	if (err) {
		if (set && tacho_msr_set_count(set))
			tell_failures(set, "save");
		else
			cli_error("cannot save: %s", tacho_strerror(err));
		tacho_msr_set_free(set);
		return EXIT_FAIL;
	}
	f = cli_open_output(path);
	if (!f) {
		tacho_msr_set_free(set);
		return EXIT_FAIL;
	}
	err = tacho_msr_save_write(set, f);
	ret = cli_close_output(f, path);
	if (err && err != -EIO)
		cli_error("cannot save to '%s': %s", path, tacho_strerror(err));
	n = tacho_msr_set_count(set);
	for (size_t i = 0; i < n; i++) {
		struct tacho_msr_entry e = { .sz = sizeof(e) };
		tacho_msr_set_entry(set, i, &e);
		absent += e.err != 0;
	}
	if (!err && ret == EXIT_OK && strcmp(path, "-")) {
		printf("saved %zu values of %zu CPU%s to %s", n - absent, c->ncpus,
		       c->ncpus == 1 ? "" : "s", path);
		if (absent)
			printf(" (%zu absent: the CPU does not have them)", absent);
		putchar('\n');
	}
	tacho_msr_set_free(set);
	return err ? EXIT_FAIL : ret;
}

static int do_restore(struct msr_cli *c)
{
	struct tacho_msr_set *saved = NULL, *report = NULL;
	const char *path = c->ops[0];
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char *text = NULL, where[600], a[160], b[160];
	size_t len = 0;
	int err, ret;

	/* a regular file only: a FIFO would be waited on for ever, a device read */
	err = tc_read_regular_file(path, &text, &len, SAVE_MAX);
	if (err) {
		cli_error("cannot read '%s': %s", path, err == -EINVAL ? "it is not a regular "
			  "file (a FIFO, a device): a save is a file that msr save wrote" :
			  err == -EFBIG ? "larger than any save (16 MiB)" : tacho_strerror(err));
		return EXIT_FAIL;
	}
	err = tacho_msr_save_parse(text, len, path, &saved, &diag);
	free(text);
	if (err) {
		tacho_diag_format(&diag, where, sizeof(where));
		cli_error("cannot restore from %s", diag.message[0] ? where : tacho_strerror(err));
		return EXIT_FAIL;
	}
	ret = open_dev(c);
	if (ret) {
		tacho_msr_set_free(saved);
		return ret;
	}
	if (tacho_msr_set_new(c->decode ? TACHO_MSR_SET_FIELDS : 0, &report)) {
		tacho_msr_set_free(saved);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	err = tacho_msr_restore(c->dev, saved, c->force ? TACHO_MSR_FORCE : 0, report);
	switch (err) {
	case 0:
		ret = print_set(c, report);
		break;
	case -TACHO_EMSRCPU: {
		struct tacho_msr_cpu was;
		tacho_msr_set_processor(saved, &was);
		tacho_msr_cpu_format(&was, a, sizeof(a));
		tacho_msr_cpu_format(tacho_msr_dev_cpu(c->dev), b, sizeof(b));
		cli_error("cannot restore from '%s': it was saved on %s, and this is %s", path, a, b);
		ret = EXIT_FAIL;
		break;
	}
	case -TACHO_ENOFORCE:
		cli_error("not restoring %zu values from '%s': a write changes what the CPU does "
			  "for every program on it (add --force)", tacho_msr_set_count(saved), path);
		ret = EXIT_FAIL;
		break;
	case -ENOMEM:
		cli_error("out of memory");
		ret = EXIT_FAIL;
		break;
	default:
		print_set(c, report);
		tell_failures(report, "restore");
		ret = EXIT_FAIL;
		break;
	}
	tacho_msr_set_free(report);
	tacho_msr_set_free(saved);
	return ret;
}

static int do_rates(struct msr_cli *c, unsigned what)
{
	struct tacho_msr_rates *r = NULL;
	size_t failed = 0;
	int err, ret;

	ret = open_dev(c);
	if (!ret)
		ret = get_cpus(c, what == TACHO_MSR_RATE_POWER ? 0 : -1);
	if (ret)
		return ret;
	err = tacho_msr_rates_measure(c->dev, c->cpus, c->ncpus, c->interval_set ? c->interval :
				      1000, what, &r);
	if (err) {
		cli_error("cannot measure: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < tacho_msr_rates_count(r); i++) {
		struct tacho_msr_rate x = { .sz = sizeof(x) };
		tacho_msr_rates_get(r, i, &x);
		/* an idle CPU (no MPERF) is an answer; a register that cannot be read is not */
		if ((x.freq_err && x.freq_err != -TACHO_ENOVALUE) ||
		    (x.power_err && x.power_err != -TACHO_ENOVALUE)) {
			if (!failed)
				cli_error("cannot read the %s registers on CPU %d: %s",
					  x.freq_err ? "frequency" : "RAPL", x.cpu,
					  x.freq_err ? x.freq_why : x.power_why);
			failed++;
		}
	}
	if (failed < tacho_msr_rates_count(r) || c->fmt != TACHO_FORMAT_TABLE) {
		/* the readings after the failure's line */
		fflush(stderr);
		err = tacho_msr_rates_write(r, stdout, c->fmt, &c->wo);
		if (err && err != -EIO)
			cli_error("cannot write the readings: %s", tacho_strerror(err));
		if (err)
			ret = EXIT_FAIL;
	}
	tacho_msr_rates_free(r);
	return failed ? EXIT_FAIL : ret;
}

static int cmd_msr_fn(int argc, char **argv)
{
	struct msr_cli c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.fmt = TACHO_FORMAT_TABLE;
	cli_write_opts_init(&c.wo);
	ret = msr_parse(&c, argc, argv);
	if (ret != GO_ON)
		return ret;
	if (!strcmp(c.sub, "list"))
		ret = do_list(&c);
	else if (!strcmp(c.sub, "decode"))
		ret = do_decode(&c);
	else if (!strcmp(c.sub, "read"))
		ret = do_read(&c);
	else if (!strcmp(c.sub, "write"))
		ret = do_write(&c);
	else if (!strcmp(c.sub, "save"))
		ret = do_save(&c);
	else if (!strcmp(c.sub, "restore"))
		ret = do_restore(&c);
	else
		ret = do_rates(&c, !strcmp(c.sub, "freq") ? TACHO_MSR_RATE_FREQ :
			       TACHO_MSR_RATE_POWER);
	tacho_msr_dev_free(c.dev);
	free(c.cpus);
	return ret;
}

const struct cli_cmd cmd_msr = {
	.name = "msr",
	.fn = cmd_msr_fn,
	.summary = "read, decode and (forced, allow-listed) write model-specific registers",
	.usage = msr_usage,
	.options = msr_options,
	.help_col = 26,
	.footer = msr_footer,
};

static const struct cli_cmd *self(void)
{
	return &cmd_msr;
}

/* --- the event-select view of events (tacho list -v, tacho stat -v) --- */

int cli_msr_explain_events(const struct tacho_evlist *list, FILE *f)
{
	struct tacho_msr_set *set = NULL;
	struct tacho_write_opts wo;
	struct tacho_msr_cpu cpu;
	char who[160];
	int err;

	tacho_msr_cpu_live(&cpu);
	err = tacho_msr_set_new(TACHO_MSR_SET_FIELDS, &set);
	for (size_t i = 0; !err && i < tacho_evlist_count(list); i++) {
		struct perf_event_attr attr;
		char label[512];

		err = tacho_evlist_attr(list, i, &attr);
		if (err)
			break;
		snprintf(label, sizeof(label), "%s (type %u, config 0x%llx)",
			 tacho_evlist_name(list, i), attr.type, (unsigned long long)attr.config);
		err = tacho_msr_set_add_event(set, label, &attr, tacho_evlist_pmu(list, i), &cpu);
	}
	if (!err) {
		tacho_msr_cpu_format(&cpu, who, sizeof(who));
		fprintf(f, "what perf programs for %s on %s (counter 0's event select; every "
			"counter's has this layout; nothing is written):\n\n",
			tacho_evlist_count(list) == 1 ? "this event" : "these events", who);
		cli_write_opts_init(&wo);
		err = tacho_msr_set_write(set, f, TACHO_FORMAT_TABLE, &wo);
	}
	tacho_msr_set_free(set);
	if (err && err != -EIO)
		cli_error("cannot show the events' registers: %s", tacho_strerror(err));
	return err;
}
