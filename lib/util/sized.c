/* sized.c - copying structs of the API between the caller's version and the library's
 * (docs/architecture.md, "An API that can grow"): fields only ever go at the end, so
 * the common prefix of two versions is the same bytes; and checking a caller's options
 * (TC_OPTS_VALID): its first version at least, nothing set past what the library knows. */
#include <errno.h>
#include <string.h>

#include "util/util.h"

void tc_sized_put(void *dst, size_t dst_sz, const void *src, size_t src_sz)
{
	memcpy(dst, src, dst_sz < src_sz ? dst_sz : src_sz);
}

void tc_sized_put_sz(void *dst, const void *src, size_t src_sz)
{
	size_t sz;

	memcpy(&sz, dst, sizeof(sz));
	if (sz > src_sz)
		sz = src_sz;
	if (sz > sizeof(sz))
		memcpy((char *)dst + sizeof(sz), (const char *)src + sizeof(sz), sz - sizeof(sz));
}

void tc_sized_get(void *dst, size_t dst_sz, const void *src, size_t src_sz)
{
	size_t n = dst_sz < src_sz ? dst_sz : src_sz;

	memcpy(dst, src, n);
	memset((char *)dst + n, 0, dst_sz - n);
}

int tc_opts_check(const void *opts, size_t v1, size_t known, const char *name,
		  struct tacho_diag *diag)
{
	const unsigned char *p = opts;
	size_t sz;

	if (!opts)
		return 0;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < v1)
		return -EINVAL;
	for (size_t i = known; i < sz; i++)
		if (p[i])
			return tc_diag_set(diag, "", 0, 0, -TACHO_EVERSION,
					   "%s of %zu bytes sets byte %zu, past the %zu bytes "
					   "libtacho %s knows: a newer tacho.h asks for "
					   "something this library lacks", name, sz, i, known,
					   tacho_version());
	return 0;
}

void tc_opts_copy(void *dst, size_t dst_sz, const void *opts)
{
	size_t sz;

	if (opts) {
		memcpy(&sz, opts, sizeof(sz));
		tc_sized_get(dst, dst_sz, opts, sz);
	} else {
		memset(dst, 0, dst_sz);
	}
	memcpy(dst, &dst_sz, sizeof(dst_sz));
}
