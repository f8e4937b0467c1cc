/* cmd-buildid-cache.c - `tacho buildid-cache`: list and prune the copies of binaries that
 * recordings keep by build-id (docs/buildid-cache.md). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_DIR = 256, OPT_JSON, OPT_PURGE, OPT_MAX_SIZE };

static const char bc_usage[] =
	"usage: tacho buildid-cache [--dir <dir>] [-l | --list] [--json]\n"
	"   or: tacho buildid-cache [--dir <dir>] (-r | --remove) <build-id>|<path>\n"
	"   or: tacho buildid-cache [--dir <dir>] (--purge | --max-size <size>)\n"
	"\n"
	"At its end, 'tacho record' copies each binary the program mapped into a cache by\n"
	"build-id ($XDG_CACHE_HOME/tacho, else ~/.cache/tacho; no file over 64 MiB, none\n"
	"once the cache holds 1 GiB), so that 'tacho report' still names the functions of a\n"
	"binary that was rebuilt or removed since. This lists the cache (the default), removes\n"
	"entries, or prunes it, the least recently used first.\n"
	"\n";

static const struct cli_option bc_options[] = {
	{ 'l', 'l', "list", NULL,
	  "list the cache: build-id, size, last used, path (the default)" },
	{ OPT_JSON, 0, "json", NULL,
	  "the list as JSON: {\"version\": 1, \"dir\", \"bytes\", \"entries\":\n"
	  "[{\"build_id\", \"path\", \"bytes\", \"used\"}]} (docs/schemas.md)" },
	{ 'r', 'r', "remove", "<what>",
	  "remove the copies of a file (a path) or of a build-id (its\n"
	  "first 8 or more hex digits)" },
	{ OPT_PURGE, 0, "purge", NULL,
	  "remove everything (the report's copy of the kernel's symbols too)" },
	{ OPT_MAX_SIZE, 0, "max-size", "<size>",
	  "remove the least recently used until the cache holds at most\n"
	  "<size> (4096, 64K, 500M, 1G)" },
	{ OPT_DIR, 0, "dir", "<dir>",
	  "the cache's folder (default: $XDG_CACHE_HOME/tacho)" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char bc_footer[] =
	"exit status: 0 done, 1 failed (or nothing to remove), 2 bad usage\n";

static int run_bc(int argc, char **argv);

const struct cli_cmd cmd_buildid_cache = {
	.name = "buildid-cache",
	.fn = run_bc,
	.summary = "list and prune the copies of binaries that recordings keep",
	.usage = bc_usage,
	.options = bc_options,
	.help_col = 24,
	.indent_long = true,
	.footer = bc_footer,
};

static int run_bc(int argc, char **argv)
{
	struct cli_args args;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_write_opts wo;
	const char *dir = NULL, *remove = NULL;
	char defdir[4096], size[32];
	bool json = false, purge = false, list = false, prune = false;
	uint64_t max = 0, freed = 0;
	unsigned removed = 0;
	int opt, err;

	cli_args_init(&args, &cmd_buildid_cache, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case 'l':
			list = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'r':
			remove = optarg;
			break;
		case OPT_PURGE:
			purge = true;
			break;
		case OPT_MAX_SIZE:
			if (tc_parse_size(optarg, &max, NULL))
				return cli_usage_error(&cmd_buildid_cache, "--max-size needs a size "
						       "(4096, 64K, 500M, 1G), not '%s'", optarg);
			prune = true;
			break;
		case OPT_DIR:
			dir = optarg;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (optind < argc)
		return cli_usage_error(&cmd_buildid_cache, "unexpected argument '%s'", argv[optind]);
	if ((list || json) + !!remove + purge + prune > 1)
		return cli_usage_error(&cmd_buildid_cache, "--list, --remove, --purge and "
				       "--max-size exclude each other");
	if (!dir) {
		err = tacho_buildid_cache_dir(defdir, sizeof(defdir));
		if (err) {
			cli_error("cannot find the build-id cache: %s (neither XDG_CACHE_HOME nor "
				  "HOME is an absolute path; give --dir)", tacho_strerror(err));
			return EXIT_FAIL;
		}
		dir = defdir;
	}
	if (remove) {
		err = tacho_buildid_cache_remove(dir, remove, &removed, &diag);
		if (err == -EINVAL)
			return cli_usage_error(&cmd_buildid_cache, "%s", diag.message);
		if (err) {
			cli_error("cannot remove '%s': %s", remove, diag.message);
			return EXIT_FAIL;
		}
		printf("removed %u %s from %s\n", removed, removed == 1 ? "entry" : "entries", dir);
		return EXIT_OK;
	}
	if (purge || prune) {
		err = tacho_buildid_cache_prune(dir, purge ? 0 : max, &removed, &freed, &diag);
		if (err) {
			cli_error("cannot prune the build-id cache: %s", diag.message);
			return EXIT_FAIL;
		}
		printf("removed %u %s (%s) from %s\n", removed, removed == 1 ? "entry" : "entries",
		       tc_fmt_size(freed, size, sizeof(size)), dir);
		return EXIT_OK;
	}
	cli_write_opts_init(&wo);
	err = tacho_buildid_cache_write(dir, stdout, json ? TACHO_FORMAT_JSON : TACHO_FORMAT_TABLE,
					&wo);
	/* a write error is told once, by main's check of standard output */
	if (err && err != -EIO)
		cli_error("cannot list the build-id cache in %s: %s", dir, tacho_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}
