/* sized.c - copying structs of the API between the caller's version and the library's
 * (docs/architecture.md, "An API that can grow"): fields only ever go at the end, so
 * the common prefix of two versions is the same bytes. */
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
