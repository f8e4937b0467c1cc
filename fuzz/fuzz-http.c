/* fuzz-http.c - libFuzzer target for the HTTP client's parsers of what a server (or
 * the user) sends: the answer to a push (tc_http_response_parse: status line, header
 * fields, chunked bodies) and the --push URL (tc_http_url_parse). The answer is not
 * NUL-terminated (a read past the end is what ASan catches); accepted answers are
 * checked for what the callers print. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* printable ASCII, NUL-terminated within the field */
static void check_text(const char *s, size_t size)
{
	const char *nul = memchr(s, '\0', size);

	if (!nul)
		abort();
	for (; s < nul; s++)
		if (*s < ' ' || *s > '~')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_http_response r;
	struct tc_http_url u;
	char *exact = malloc(size ? size : 1), *text = malloc(size + 1);
	const char *why;
	int err;

	if (!exact || !text)
		goto out;
	memcpy(exact, data, size);
	err = tc_http_response_parse(exact, size, &r);
	if (err == 0) {
		if (r.status < 100 || r.status > 599)
			abort();
		check_text(r.status_line, sizeof(r.status_line));
		check_text(r.body_line, sizeof(r.body_line));
	} else if (err != -EBADMSG) {
		abort();
	}
	memcpy(text, data, size);
	text[size] = '\0';
	err = tc_http_url_parse(text, &u, &why);
	if (err == 0) {
		check_text(u.host, sizeof(u.host));
		check_text(u.path, sizeof(u.path));
		if (!u.host[0] || why || (u.path[0] && u.path[0] != '/') ||
		    atoi(u.port) < 1 || atoi(u.port) > 65535)
			abort();
	} else if (!why || (err != -EINVAL && err != -EPROTONOSUPPORT)) {
		abort();
	}
out:
	free(exact);
	free(text);
	return 0;
}
