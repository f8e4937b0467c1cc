/* offcpu-sleep.c - a thread that blocks for known times in known functions, for
 * record --off-cpu (tests/e2e/test-record-offcpu.c): it sleeps 200 ms in f, then
 * 100 ms in g; the main thread waits for it in pthread_join.
 *
 * f and g make the system call themselves (x86-64's syscall instruction), with frame
 * pointers: the kernel's user call chain starts at the instruction after the syscall,
 * in f or g, and walks on to their callers by the frames. Through libc's nanosleep
 * (built without frame pointers) the chain would skip the function that called it.
 * The thread tells how long each call took by its own clock. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define FP __attribute__((noinline, optimize("no-omit-frame-pointer")))

/* Sleeps ms milliseconds in one clock_nanosleep, here. */
static inline long sleep_here(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	long ret;

#if defined(__x86_64__)
	register long a4 __asm__("r10") = 0;
	__asm__ volatile("syscall" : "=a"(ret)
			 : "0"(230L /* clock_nanosleep */), "D"((long)CLOCK_MONOTONIC),
			   "S"(0L), "d"(&ts), "r"(a4)
			 : "rcx", "r11", "memory");
#else
	ret = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
#endif
	return ret;
}

FP long f(void)
{
	return sleep_here(200);
}

FP long g(void)
{
	return sleep_here(100);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Each call as this thread saw it pass, on standard error ("offcpu-sleep: f NS g NS"):
 * the sleep, and on a loaded machine the wait for a CPU after it, which off-CPU time
 * holds too. */
FP static void *sleeper(void *arg)
{
	long long t0 = now_ns(), t1, t2;
	long r = f();

	t1 = now_ns();
	r |= g();
	t2 = now_ns();
	fprintf(stderr, "offcpu-sleep: f %lld g %lld\n", t1 - t0, t2 - t1);
	return (void *)r;
}

int main(void)
{
	pthread_t t;
	void *r;

	if (pthread_create(&t, NULL, sleeper, NULL) || pthread_join(t, &r)) {
		fprintf(stderr, "offcpu-sleep: cannot run the thread\n");
		return 1;
	}
	return r ? 1 : 0;
}
