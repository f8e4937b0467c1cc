/* fuzz-pmu-sysfs.c - libFuzzer target for what the event parser reads of a sysfs PMU:
 * the contents of its format files, of an alias file in events/ and of the alias's
 * .scale and .unit. The input is up to six NUL-separated parts: format/event,
 * format/umask, events/ev, events/ev.scale, events/ev.unit, and the terms of a spec
 * "fz/TERMS/"; each is written into a fake PMU folder in a temporary directory (a part
 * that is not there removes its file). Then "fz/ev/", "fz/event=N,umask=N/" and
 * "fz/TERMS/" are parsed against it, and the sysfs PMU source of the event walk lists
 * it. Checks the parser's promises as fuzz-events does: an error leaves the list NULL
 * and a message pointing at a column inside the spec (or just after it); a success
 * gives complete events with a positive scale and a unit. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events/events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

/* A folder in memory when there is one: files are rewritten on every run. */
static const char *fuzz_tmp(void)
{
	return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}


static const char *const files[] = {
	"format/event", "format/umask", "events/ev", "events/ev.scale", "events/ev.unit",
};

static void file_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/fz/%s", root, name);
}

static void remove_tree(void)
{
	static const char *const rest[] = { "type", "format", "events", "" };
	char p[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		file_path(p, sizeof(p), files[i]);
		unlink(p);
	}
	for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++) {
		file_path(p, sizeof(p), rest[i]);
		if (unlink(p))
			rmdir(p);
	}
	rmdir(root);
}

static int make_tree(void)
{
	char p[128];
	FILE *f;

	snprintf(root, sizeof(root), "%s/fuzz-pmu-sysfs-XXXXXX", fuzz_tmp());
	if (!mkdtemp(root))
		return -1;
	atexit(remove_tree);
	file_path(p, sizeof(p), "");
	if (mkdir(p, 0700))
		return -1;
	file_path(p, sizeof(p), "format");
	if (mkdir(p, 0700))
		return -1;
	file_path(p, sizeof(p), "events");
	if (mkdir(p, 0700))
		return -1;
	file_path(p, sizeof(p), "type");
	f = fopen(p, "w");
	if (!f)
		return -1;
	fputs("42\n", f);
	return fclose(f);
}

static void check(const char *spec, const struct tacho_event_opts *opts)
{
	struct tacho_evlist *l = (struct tacho_evlist *)&l;
	struct tacho_diag d = { .sz = sizeof(d) };
	char caret[600];
	int r = tacho_evlist_parse_opts(spec, opts, &l, &d);

	if (r) {
		if (l != NULL || d.message[0] == '\0' || d.column == 0 ||
		    d.column > strlen(spec) + 1)
			abort();
		tacho_diag_caret(&d, caret, sizeof(caret));
		return;
	}
	for (size_t i = 0; i < tacho_evlist_count(l); i++) {
		struct perf_event_attr a;
		const struct tc_event *ev = tc_evlist_get(l, i);
		if (tacho_evlist_attr(l, i, &a) != 0 || a.size != sizeof(a) || !ev->name ||
		    !ev->pmu || !ev->unit || !(tc_evlist_scale(l, i) > 0))
			abort();
	}
	tacho_evlist_free(l);
}

static int visit(void *arg, const struct tacho_event_info *ev)
{
	(void)arg;
	if (!ev->name || !ev->pmu)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_event_opts opts = {
		.sz = sizeof(opts), .sysfs_pmu_root = root, .flags = TACHO_EVENT_NO_FILES,
	};
	const uint8_t *part = data, *end = data + size;
	char p[128], spec[600] = "";

	if (size > 4096)
		return 0;
	if (!root[0] && make_tree())
		abort();
	for (size_t i = 0; i <= sizeof(files) / sizeof(files[0]); i++) {
		const uint8_t *nul = part ? memchr(part, '\0', (size_t)(end - part)) : NULL;
		size_t len = part ? (size_t)((nul ? nul : end) - part) : 0;

		if (i == sizeof(files) / sizeof(files[0])) {
			if (part)
				snprintf(spec, sizeof(spec), "fz/%.*s/", (int)len, (const char *)part);
			break;
		}
		file_path(p, sizeof(p), files[i]);
		if (part) {
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd < 0 || write(fd, part, len) != (ssize_t)len)
				abort();
			close(fd);
		} else {
			unlink(p);
		}
		part = nul ? nul + 1 : NULL;
	}
	check("fz/ev/", &opts);
	check("fz/event=0x3c,umask=1/", &opts);
	check("fz/ev,period=1000/", &opts);
	if (spec[0])
		check(spec, &opts);
	tacho_events_foreach(&opts, 1u << TACHO_EVENT_SRC_PMU, visit, NULL);
	return 0;
}
