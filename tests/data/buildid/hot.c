/* hot.c - test-cmd-buildid-cache's program: hotfn spends the time; built twice, once
 * with -DCHANGED (another build-id), to show a report naming the functions of the first
 * build from the build-id cache. */
volatile long s;

__attribute__((noinline)) void hotfn(long n)
{
	for (long i = 0; i < n; i++)
#ifdef CHANGED
		s += i * 3;
#else
		s += i;
#endif
}

int main(void)
{
	hotfn(200000000);
	return 0;
}
