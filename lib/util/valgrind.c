/* valgrind.c - valgrind's client requests, written from its documented ABI rather than
 * taken from valgrind.h, so that libtacho builds and runs without valgrind installed.
 * Below every part that needs them: regions mark their boundaries for the simulator
 * with them, and the engine's proofs of its sources ask whether they run on valgrind's
 * synthetic CPU (where a breakpoint on code never fires: the code that runs is a
 * translation). */
#include <stdint.h>

#include "util/util.h"

/* callgrind's requests, numbered from its two letters 'C','T' (callgrind.h) */
#define CG_DUMP_STATS_AT (TC_VG_TOOL_BASE('C', 'T') + 3)

/* One client request: args[0] the request, args[1..5] its arguments; the result, or
 * dflt when no valgrind answers. On amd64 the request is the "special instruction
 * preamble" (four rotations of %rdi by 3, 13, 61 and 51 bits: 128 in all, so %rdi is
 * unchanged on a real CPU) followed by xchgq %rbx,%rbx; valgrind's decoder recognizes
 * the sequence, reads the arguments' address from %rax and puts the result in %rdx
 * (valgrind.h, "VALGRIND_DO_CLIENT_REQUEST_EXPR" for amd64-linux). Elsewhere there is
 * no request: the default comes back. */
uintptr_t tc_valgrind_request(uintptr_t dflt, uintptr_t req, uintptr_t a1)
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

unsigned tc_valgrind_running(void)
{
	return (unsigned)tc_valgrind_request(0, TC_VG_RUNNING_ON_VALGRIND, 0);
}

void tc_valgrind_dump_at(const char *name)
{
	tc_valgrind_request(0, CG_DUMP_STATS_AT, (uintptr_t)name);
}
