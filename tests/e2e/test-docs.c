/* test-docs.c - the programs in the docs compile: every ```c block of the pages in docs/ that is
 * a whole program (it has "int main") is compiled with -Wall -Werror against include/
 * and this build tree's libtacho.a. A failure names the page and the line where the
 * block starts, with the compiler's messages. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#if defined(__SANITIZE_ADDRESS__)
#define SAN_FLAGS "-fsanitize=address,undefined"   /* the library is sanitized too */
#else
#define SAN_FLAGS NULL
#endif

struct docs_result {
	unsigned programs, failed;
	char pages[2048];   /* "cpu.md stat.md ..." pages that have a program */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Compiles text (one block) as tmpdir/NAME-LINE.c; 0 when it compiled. */
static int compile_block(const char *tmpdir, const char *page, unsigned line, const char *text,
			 size_t len)
{
	char src[4096], bin[4096], inc[4096], lib[4096];
	struct th_run r;
	FILE *f;
	int status;

	snprintf(src, sizeof(src), "%s/%s-%u.c", tmpdir, page, line);
	snprintf(bin, sizeof(bin), "%s/%s-%u", tmpdir, page, line);
	f = fopen(src, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	snprintf(inc, sizeof(inc), "-I%s", th_path("include"));
	snprintf(lib, sizeof(lib), "%s/libtacho.a", th_build_dir());

	const char *argv[] = { "cc", "-std=gnu11", "-Wall", "-Werror", inc, "-o", bin, src, lib,
			 "-lpfm", "-ldw", "-lelf", "-ltraceevent", "-lcapstone", "-lz", "-lm", "-lpthread",
			 "-ldl", SAN_FLAGS, NULL };
	th_runv(&r, NULL, (char *const *)argv);
	status = r.status;
	if (status)
		print_error("docs/%s:%u: the program in this ```c block does not compile:\n%s%s\n",
			    page, line, r.out, r.err);
	th_run_free(&r);
	unlink(src);
	unlink(bin);
	return status;
}

static void check_page(const char *tmpdir, const char *page, struct docs_result *res)
{
	char path[512];
	char *buf = NULL, *block = NULL;
	size_t cap = 0, blen = 0, bcap = 0;
	unsigned line = 0, start = 0;
	bool in_c = false, in_other = false, counted = false;
	FILE *f;

	snprintf(path, sizeof(path), "docs/%s", page);
	f = fopen(th_path(path), "r");
	if (!f)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	while (getline(&buf, &cap, f) > 0) {
		size_t n = strlen(buf);
		line++;
		if (!in_c && !in_other && !strncmp(buf, "```", 3)) {
			/* ```c, possibly with spaces after; any other fence is not C */
			in_c = buf[3] == 'c' && strspn(buf + 4, " \t\r\n") == strlen(buf + 4);
			in_other = !in_c;
			start = line + 1;
			blen = 0;
			continue;
		}
		if ((in_c || in_other) && !strncmp(buf, "```", 3)) {
			if (in_c && block && strstr(block, "int main")) {
				res->programs++;
				if (!counted) {
					counted = true;
					strncat(res->pages, page, sizeof(res->pages) - strlen(res->pages) - 2);
					strcat(res->pages, " ");
				}
				if (compile_block(tmpdir, page, start, block, blen))
					res->failed++;
			}
			in_c = in_other = false;
			continue;
		}
		if (in_c) {
			if (blen + n + 1 > bcap) {
				bcap = (blen + n + 1) * 2;
				block = realloc(block, bcap);
				assert_non_null(block);
			}
			memcpy(block + blen, buf, n + 1);
			blen += n;
		}
	}
	if (in_c || in_other)
		fail_msg("docs/%s:%u: a ``` block is never closed", page, start - 1);
	fclose(f);
	free(buf);
	free(block);
}

static void test_docs_programs_compile(void **state)
{
	char tmpdir[] = "/tmp/tacho-docs.XXXXXX";
	struct docs_result res = { 0 };
	char *pages[128];
	size_t npages = 0;
	struct dirent *e;
	DIR *d;
	(void)state;

	assert_non_null(mkdtemp(tmpdir));
	d = opendir(th_path("docs"));
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n > 3 && !strcmp(e->d_name + n - 3, ".md") && npages < 128)
			pages[npages++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(pages, npages, sizeof(pages[0]), cmp_str);
	for (size_t i = 0; i < npages; i++) {
		check_page(tmpdir, pages[i], &res);
		free(pages[i]);
	}
	rmdir(tmpdir);
	print_message("%u programs in the docs, %u do not compile; pages with one: %s\n",
		      res.programs, res.failed, res.pages);
	/* the extraction itself works: these pages carry whole programs */
	assert_contains(res.pages, "lib-tsc.md");
	assert_contains(res.pages, "stat.md");
	assert_int_equal(res.failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docs_programs_compile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
