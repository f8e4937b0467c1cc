/* sim-kernels.c - small kernels whose simulated counts are known, for the tests of
 * `tacho stat --sim` (tests/e2e/test-cmd-sim.c). Static and not position-independent
 * (Makefile: tests/progs): a short start-up, the same on every run.
 *
 *   sim-kernels loop N            N iterations of an asm loop of exactly 6 instructions
 *                                 and 1 conditional branch (4 nop, dec, jnz)
 *   sim-kernels entryloop N       the same loop with its label on its function's first
 *                                 instruction (N > 0)
 *   sim-kernels stream BYTES P    P passes over a 64-byte-aligned buffer of BYTES,
 *                                 one load every 64 bytes (one per cache line)
 *   sim-kernels branch alt N      N conditional branches taken every other time
 *   sim-kernels branch rand N     N conditional branches taken at random (xorshift)
 *   sim-kernels calls N M         the loop N times through via_a, then M times through
 *                                 via_b (record --sim -g: two call chains to one loop)
 *   sim-kernels exec N            execs itself (argv[0], a path) as "loop N"
 *   sim-kernels fork N            a child process runs the loop N times; the parent
 *                                 waits for it (SIGCHLD left at its default, so that
 *                                 the wait is never interrupted: the same instructions
 *                                 on every run)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long num(const char *s)
{
	return s ? strtol(s, NULL, 10) : 0;
}

/* Exactly 6 instructions per iteration, the last one the loop's only branch; never
 * inlined, so that its instructions are the function "loop"'s in every view. */
static __attribute__((noinline)) void loop(long n)
{
	if (n <= 0)
		return;
	__asm__ volatile("1:\n\t"   /* sim-kernels: the loop line */
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "dec %0\n\t"
			 "jnz 1b"
			 : "+r"(n)
			 :
			 : "cc");
}

/* The same 6 instructions with the loop's label on the function's first instruction
 * (no check before it: the shape of gcc's do-while loops), then its ret. */
__attribute__((naked, noinline)) static void entry_loop(long n)
{
	(void)n;
	__asm__ volatile("1:\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "dec %rdi\n\t"
			 "jnz 1b\n\t"
			 "ret");
}

/* Two callers of the loop, each a frame of its own (the empty asm after the call keeps
 * it from becoming a tail jump). */
static __attribute__((noinline)) void via_a(long n)
{
	loop(n);   /* sim-kernels: via_a's call */
	__asm__ volatile("");
}

static __attribute__((noinline)) void via_b(long n)
{
	loop(n);   /* sim-kernels: via_b's call */
	__asm__ volatile("");
}

/* One load per line: the asm keeps the compiler from merging or dropping loads. */
static void stream(size_t bytes, long passes)
{
	unsigned char *buf = aligned_alloc(64, bytes ? bytes : 64);

	if (!buf)
		exit(3);
	for (long p = 0; p < passes; p++)
		for (size_t i = 0; i < bytes; i += 64) {
			unsigned char v;
			__asm__ volatile("movb (%1), %0" : "=r"(v) : "r"(buf + i) : "memory");
		}
	free(buf);
}

/* n conditional branches (the jz) whose direction is bit 0 of bits[i]. */
static void branches(const uint8_t *bits, long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("test $1, %0\n\t"
				 "jz 1f\n\t"
				 "nop\n"
				 "1:"
				 :
				 : "r"(bits[i])
				 : "cc");
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "loop")) {
		loop(num(argc > 2 ? argv[2] : NULL));
	} else if (!strcmp(cmd, "entryloop") && num(argc > 2 ? argv[2] : NULL) > 0) {
		entry_loop(num(argv[2]));
	} else if (!strcmp(cmd, "calls") && argc > 3) {
		via_a(num(argv[2]));
		via_b(num(argv[3]));
	} else if (!strcmp(cmd, "exec") && argc > 2) {
		execl(argv[0], argv[0], "loop", argv[2], (char *)NULL);
		return 5;
	} else if (!strcmp(cmd, "fork")) {
		int st;
		pid_t pid = fork();

		if (pid < 0)
			return 3;
		if (pid == 0) {
			loop(num(argc > 2 ? argv[2] : NULL));
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 4;
	} else if (!strcmp(cmd, "stream")) {
		stream((size_t)num(argc > 2 ? argv[2] : NULL), num(argc > 3 ? argv[3] : NULL));
	} else if (!strcmp(cmd, "branch") && argc > 3) {
		long n = num(argv[3]);
		uint8_t *bits = malloc(n > 0 ? (size_t)n : 1);
		uint64_t x = 88172645463325252ull;
		int alt = !strcmp(argv[2], "alt");

		if (!bits)
			return 3;
		for (long i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			bits[i] = alt ? (uint8_t)(i & 1) : (uint8_t)(x >> 32);
		}
		branches(bits, n);
		free(bits);
	} else {
		return 2;
	}
	return 0;
}
