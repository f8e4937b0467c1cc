/* wc.c - a word count in the spirit of Terje Mathisen's WC 5.40 (seed 000), which he
 * tuned with P5Stat to 1.5 cycles per byte on a 60 MHz Pentium: count lines, words and
 * bytes with a table-driven inner loop, then let tacho's harness time that loop and say
 * what one byte costs.
 *
 *   wc [FILE]                  count FILE (or stdin), then benchmark the count
 *   wc --generate BYTES        count BYTES of generated text (deterministic)
 *   wc --generate BYTES --emit write the generated text to stdout, nothing else
 *
 * Prints "LINES WORDS BYTES" as wc(1) does, then TSC ticks per byte (the TSC runs at a
 * constant rate, so these are reference cycles, not core cycles) and, where the CPU's
 * cycles event can be counted, core cycles per byte.
 *
 * Build: cc wc.c $(pkg-config --cflags --libs tacho)   (or `make examples`) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tacho.h"

/* Character classes, as WC used a lookup table instead of compares: 1 for the bytes
 * that separate words (the C locale's isspace), 0 for the rest. */
static unsigned char space[256];

static void init_classes(void)
{
	static const char ws[] = " \t\n\v\f\r";
	for (const char *p = ws; *p; p++)
		space[(unsigned char)*p] = 1;
}

struct counts {
	uint64_t lines, words, bytes;
};

/* One pass: a word starts where a non-space follows a space (or the start). The
 * branch-free update keeps the loop's speed independent of the text. */
static void count(const unsigned char *s, size_t n, struct counts *c)
{
	uint64_t lines = 0, words = 0;
	unsigned prev = 1;

	for (size_t i = 0; i < n; i++) {
		unsigned sp = space[s[i]];
		words += prev & (sp ^ 1);
		lines += s[i] == '\n';
		prev = sp;
	}
	c->lines = lines;
	c->words = words;
	c->bytes = n;
}

/* Deterministic text: words of 1 to 12 letters, mostly spaces between them, a newline
 * now and then, a tab rarely (a 64-bit LCG, Knuth's MMIX constants). */
static unsigned char *generate(size_t n)
{
	unsigned char *s = malloc(n ? n : 1);
	uint64_t x = 0x2545f4914f6cdd1dull;
	size_t i = 0;

	if (!s)
		return NULL;
	while (i < n) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned len = 1 + (unsigned)(x >> 60) % 12;
		for (unsigned k = 0; k < len && i < n; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			s[i++] = (unsigned char)('a' + (x >> 59) % 26);
		}
		if (i < n) {
			unsigned r = (unsigned)(x >> 32) % 16;
			s[i++] = r == 0 ? '\n' : r == 1 ? '\t' : ' ';
		}
	}
	return s;
}

static unsigned char *slurp(FILE *f, size_t *n)
{
	size_t cap = 1 << 16, len = 0, got;
	unsigned char *s = malloc(cap);

	while (s && (got = fread(s + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			unsigned char *t = realloc(s, cap *= 2);
			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
	}
	if (s && ferror(f)) {
		free(s);
		return NULL;
	}
	*n = len;
	return s;
}

struct job {
	const unsigned char *s;
	size_t n;
	struct counts c;
};

static void count_job(void *arg)
{
	struct job *j = arg;
	count(j->s, j->n, &j->c);
}

int main(int argc, char **argv)
{
	const char *file = NULL;
	size_t gen = 0, n = 0;
	int emit = 0;
	unsigned char *s;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--generate") && i + 1 < argc) {
			char *end;
			gen = strtoull(argv[++i], &end, 10);
			if (*end || !gen) {
				fprintf(stderr, "wc: bad byte count '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--emit")) {
			emit = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "usage: wc [FILE] | wc --generate BYTES [--emit]\n");
			return 2;
		} else {
			file = argv[i];
		}
	}
	init_classes();
	if (gen) {
		s = generate(gen);
		n = gen;
	} else {
		FILE *f = file ? fopen(file, "rb") : stdin;
		if (!f) {
			perror(file);
			return 1;
		}
		s = slurp(f, &n);
		if (f != stdin)
			fclose(f);
	}
	if (!s) {
		fprintf(stderr, "wc: cannot read the input\n");
		return 1;
	}
	if (emit) {
		int bad = fwrite(s, 1, n, stdout) != n;
		free(s);
		return bad;
	}

	struct job j = { s, n, { 0, 0, 0 } };
	count_job(&j);
	printf("%llu %llu %llu%s%s\n", (unsigned long long)j.c.lines,
	       (unsigned long long)j.c.words, (unsigned long long)j.c.bytes, file ? " " : "",
	       file ? file : "");

	if (n) {
		/* the harness: 21 trials after 2 warm-ups, the cost of timing subtracted; the
		 * median resists an interrupt, the mode shows the usual case */
		struct tacho_bench_opts o = { .sz = sizeof(o), .warmup = 2, .trials = 21,
					      .events = "cycles" };
		struct tacho_bench_result *r = NULL;
		if (tacho_bench_run(count_job, &j, &o, &r, NULL) == 0) {
			if (r->below_noise)   /* no figure then: the count is within the noise */
				printf("time per byte: below the noise: %s\n", r->noise);
			else
				printf("%.3f TSC ticks per byte (median of %u trials; %.3f ns per "
				       "byte)\n", r->ticks->median / (double)n, r->kept,
				       r->ns->median / (double)n);
			if (r->event_why[0])
				printf("core cycles per byte: not counted here: %s\n", r->event_why[0]);
			else if (r->event_noise[0])
				printf("core cycles per byte: below the noise: %s\n", r->event_noise[0]);
			else
				printf("%.3f core cycles per byte (WC 5.40 on a Pentium: 1.5)\n",
				       r->events[0]->median / (double)n);
			for (unsigned i = 0; i < r->env->nwarnings; i++)
				printf("warning: %s\n", r->env->warnings[i]);
			tacho_bench_result_free(r);
		}
	}
	free(s);
	return 0;
}
