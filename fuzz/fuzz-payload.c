/* fuzz-payload.c - a structure-aware libFuzzer target for tracepoint payloads: the bytes
 * choose a recording the library's own writer writes (so that the checksums hold):
 * tracepoint events with the real format texts of sys_enter_openat, sched_switch,
 * sched_wakeup and sched_process_exec (or none), samples each
 * followed by a payload that starts as a valid one and is then cut, grown or overwritten
 * (a __data_loc string pointing anywhere), sometimes a payload after no sample. The file
 * goes through the report (perf script, its JSON) and through tacho trace's loader and every view
 * (text with its payloads and thread states, JSON, Chrome with args and state slices,
 * SVG, the summary's scheduling latency). Checks: nothing crashes, leaks or reads outside a payload (ASan). Formats are
 * whole or absent: libtraceevent 1.7 leaks a few bytes on some format texts cut short
 * (inside tep_parse_format, found by this target), which is its parser, not tacho's;
 * test-payload holds a text that is no format to -TACHO_EPARSE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/recfile.h"
#include "timeline/timeline.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

static uint32_t pick(struct in *in, uint32_t n)
{
	return n ? (uint32_t)(take(in, 1) % n) : 0;
}

#define COMMON \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* The formats as Linux 6.18's tracefs gives them (events/SYS/NAME/format). */
static const struct tp {
	const char *name;
	uint16_t id;
	unsigned size;          /* a valid payload's size */
	const char *format;
} tps[] = {
	{ "syscalls:sys_enter_openat", 782, 48,
	  "name: sys_enter_openat\nID: 782\n" COMMON
	  "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	  "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	  "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
	  "\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	  "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\n"
	  "print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", "
	  "((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), "
	  "((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))\n" },
	{ "sched:sched_switch", 372, 64,
	  "name: sched_switch\nID: 372\n" COMMON
	  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	  "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	  "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> "
	  "next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
	  "REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	  "0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? "
	  "__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | "
	  "0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "
	  "\"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, "
	  "{ 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, "
	  "{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & "
	  "(((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
	  "0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, "
	  "REC->next_prio\n" },
	{ "sched:sched_wakeup", 374, 36,
	  "name: sched_wakeup\nID: 374\n" COMMON
	  "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	  "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	  "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	  "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, "
	  "REC->prio, REC->target_cpu\n" },
	{ "sched:sched_process_exec", 365, 32,
	  "name: sched_process_exec\nID: 365\n" COMMON
	  "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	  "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	  "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	  "print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
	  "REC->old_pid\n" },
};
#define NTP (sizeof(tps) / sizeof(tps[0]))

static char path[64];

static void remove_file(void)
{
	unlink(path);
}

/* A valid payload of tracepoint tp for thread tid, into buf (at least 256 bytes). */
static unsigned valid_payload(const struct tp *tp, uint8_t *buf, uint32_t tid, struct in *in)
{
	uint32_t v;

	memset(buf, 0, 256);
	memcpy(buf, &tp->id, 2);
	memcpy(buf + 4, &tid, 4);
	switch (tp->id) {
	case 782:
		buf[8] = 1;
		v = (uint32_t)take(in, 4);
		memcpy(buf + 24, &v, 4);
		break;
	case 372:
		memcpy(buf + 8, "prev", 4);
		memcpy(buf + 24, &tid, 4);
		buf[32] = (uint8_t)take(in, 1);
		buf[33] = (uint8_t)(take(in, 1) & 1);
		memcpy(buf + 40, "next", 4);
		v = 100 + pick(in, 4);
		memcpy(buf + 56, &v, 4);
		break;
	case 374:
		memcpy(buf + 8, "wakee", 5);
		v = 100 + pick(in, 4);
		memcpy(buf + 24, &v, 4);
		break;
	case 365:
		v = 20u | 12u << 16;   /* "/bin/fuzzer" at 20, 12 bytes */
		memcpy(buf + 8, &v, 4);
		memcpy(buf + 20, "/bin/fuzzer", 12);
		break;
	}
	return tp->size;
}

static void generate(struct in *in)
{
	struct tc_record_writer w;
	uint32_t nev = 1 + pick(in, NTP);
	const struct tp *ev[NTP];

	if (tc_record_writer_open(&w, path) != 0)
		return;
	tc_record_writer_meta(&w, "trace-clock", "monotonic-raw");
	for (uint32_t e = 0; e < nev; e++) {
		ev[e] = &tps[pick(in, NTP)];
		tc_record_writer_event(&w, e, 2 /* PERF_TYPE_TRACEPOINT */, ev[e]->id,
				       0x400 /* RAW */, 1, TC_EVF_RAW, ev[e]->name);
	}
	for (uint32_t e = 0; e < nev; e++) {
		if (pick(in, 8))   /* else no format: the payloads stay undecoded */
			tc_record_writer_tpformat(&w, e, ev[e]->format, strlen(ev[e]->format));
	}
	while (in->n) {
		uint32_t e = pick(in, nev), tid = 100 + pick(in, 4);
		uint8_t buf[256];
		unsigned size;

		if (pick(in, 16) == 0) {   /* a payload after no sample */
			tc_record_writer_raw(&w, e, "x", 1);
			continue;
		}
		tc_record_writer_comm(&w, tid, tid, false, 0, "fuzz");
		tc_record_writer_sample(&w, take(in, 2), 0x400000, 0, 1, tid, tid, pick(in, 4),
					(uint16_t)e, 2, 0, NULL);
		size = valid_payload(ev[e], buf, tid, in);
		switch (pick(in, 4)) {
		case 0:                            /* cut */
			size = pick(in, size + 1);
			break;
		case 1: {                          /* bytes overwritten */
			unsigned k = 1 + pick(in, 4);
			for (unsigned i = 0; i < k; i++)
				buf[pick(in, 64)] = (uint8_t)take(in, 1);
			break;
		}
		case 2:                            /* grown */
			size += pick(in, 64);
			break;
		default:
			break;
		}
		if (size)
			tc_record_writer_raw(&w, e, buf, size);
	}
	if (pick(in, 4))
		tc_record_writer_finish(&w, 0, 0, 0, 0);
	tc_record_writer_close(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct tacho_profile *p;
	struct tacho_timeline *t;
	struct tacho_diag d = { .sz = sizeof(d) };
	FILE *null;

	if (!path[0]) {
		snprintf(path, sizeof(path), "%s/fuzz-payload-%d.rec",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
		atexit(remove_file);
	}
	generate(&in);
	null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	/* a payload after no sample is a damaged file: refused, never read */
	if (tacho_profile_load(path, &p, &d) == 0) {
		tacho_profile_write_script(p, null);
		tacho_profile_write_script_json(p, null);
		tacho_profile_free(p);
	}
	if (tacho_timeline_load(path, &t, &d) == 0) {
		tacho_timeline_write(t, null, TACHO_FORMAT_TABLE, NULL);
		tacho_timeline_write(t, null, TACHO_FORMAT_JSON, NULL);
		tacho_timeline_write_chrome(t, null);
		tacho_timeline_write_svg(t, null);
		tacho_timeline_write_summary(t, null);
		tacho_timeline_free(t);
	}
	fclose(null);
	return 0;
}
