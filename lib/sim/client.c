/* client.c - valgrind's client requests, written from its documented ABI rather than
 * taken from valgrind.h, so that libtacho builds and runs without valgrind installed:
 * whether the program runs on valgrind's synthetic CPU, and callgrind's "dump the
 * counts now, named so" that marks a region's boundaries under simulation. Natively
 * the magic sequence is a few rotations of a register that change nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim.h"

/* The request numbers of valgrind.h and callgrind.h (valgrind 3.x, stable since 3.0):
 * the core's RUNNING_ON_VALGRIND, and a tool's requests numbered from the tool's two
 * letters, 'C','T' for callgrind (VG_USERREQ_TOOL_BASE). */
#define VG_RUNNING_ON_VALGRIND 0x1001u
#define VG_TOOL_BASE(a, b) (((unsigned)(a) & 0xff) << 24 | ((unsigned)(b) & 0xff) << 16)
#define CG_DUMP_STATS_AT (VG_TOOL_BASE('C', 'T') + 3)

/* One client request: args[0] the request, args[1..5] its arguments; the result, or
 * dflt when no valgrind answers. On amd64 the request is the "special instruction
 * preamble" (four rotations of %rdi by 3, 13, 61 and 51 bits: 128 in all, so %rdi is
 * unchanged on a real CPU) followed by xchgq %rbx,%rbx; valgrind's decoder recognizes
 * the sequence, reads the arguments' address from %rax and puts the result in %rdx
 * (valgrind.h, "VALGRIND_DO_CLIENT_REQUEST_EXPR" for amd64-linux). Elsewhere there is
 * no request: the default comes back, and simulation of regions is off. */
static uintptr_t client_request(uintptr_t dflt, uintptr_t req, uintptr_t a1)
{
#if defined(__x86_64__)
	volatile uintptr_t args[6] = { req, a1, 0, 0, 0, 0 };
	volatile uintptr_t result;

	__asm__ volatile("rolq $3,  %%rdi ; rolq $13, %%rdi\n\t"
			 "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"
			 "xchgq %%rbx,%%rbx"
			 : "=d"(result)
			 : "a"(&args[0]), "0"(dflt)
			 : "cc", "memory");
	return result;
#else
	(void)req;
	(void)a1;
	return dflt;
#endif
}

unsigned tc_sim_running_on_valgrind(void)
{
	return (unsigned)client_request(0, VG_RUNNING_ON_VALGRIND, 0);
}

void tc_sim_dump_at(const char *name)
{
	client_request(0, CG_DUMP_STATS_AT, (uintptr_t)name);
}

/* 1: regions mark themselves for the simulator; 0: they measure natively; -1: not yet
 * decided. Decided once per process (a race decides it twice, the same way). */
static int sim_regions = -1;

bool tc_sim_regions_on(void)
{
	int on = __atomic_load_n(&sim_regions, __ATOMIC_RELAXED);

	if (on < 0) {
		const char *e = getenv("TACHO_SIM");
		on = e && *e && strcmp(e, "0") && tc_sim_running_on_valgrind() ? 1 : 0;
		__atomic_store_n(&sim_regions, on, __ATOMIC_RELAXED);
	}
	return on == 1;
}

void tc_sim_region_mark(char kind, const char *name)
{
	/* "tacho:b:TID:NAME". The thread's part is made once, at its first mark: an end's
	 * mark is inside its region's count, so it must cost the same on every run,
	 * whatever the thread's id (formatting 99999 and 100000 takes different numbers of
	 * instructions) */
	static __thread char tid[24];
	static __thread size_t tid_len;
	char buf[512];
	size_t pre = sizeof(TC_SIM_MARK) - 1, n = strlen(name);

	if (!tid_len) {
		int len = snprintf(tid, sizeof(tid), ":%d:", (int)gettid());
		tid_len = len > 0 && (size_t)len < sizeof(tid) ? (size_t)len : 0;
	}
	if (n > sizeof(buf) - pre - 1 - tid_len - 1)
		n = sizeof(buf) - pre - 1 - tid_len - 1;
	memcpy(buf, TC_SIM_MARK, pre);
	buf[pre] = kind;
	memcpy(buf + pre + 1, tid, tid_len);
	memcpy(buf + pre + 1 + tid_len, name, n);
	buf[pre + 1 + tid_len + n] = '\0';
	tc_sim_dump_at(buf);
}
