/* fuzz-x86len.c - libFuzzer target for the x86-64 length decoder (tc_x86_insn_len) and
 * the search for the instruction before a trap's IP (tc_x86_prev_insn). The bytes sit
 * in a buffer of their exact size, so that a read past the end is ASan's to see. Checks:
 * a length is 0 or fits in what is there and in 15 bytes; it needs only its own bytes
 * (the same with exactly those, 0 with one fewer); decoding forward from the first byte,
 * every boundary reached is found again as the end of the instruction before it, and a
 * byte inside an instruction never is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x401000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *code = malloc(size ? size : 1);
	size_t *starts = malloc((size + 1) * sizeof(*starts));
	size_t off = 0, n = 0;
	uint64_t out;

	if (!code || !starts)
		goto out_free;
	memcpy(code, data, size);
	while (off < size) {
		unsigned len = tc_x86_insn_len(code + off, size - off);
		if (!len)
			break;
		if (len > 15 || len > size - off)
			abort();
		/* the length is the instruction's own: what follows it does not matter */
		if (tc_x86_insn_len(code + off, len) != len || tc_x86_insn_len(code + off, len - 1))
			abort();
		starts[n++] = off;
		off += len;
	}
	/* every decoded end leads back to its instruction's start; each check decodes
	 * from the first byte, so a long run checks some ten ends spread over it, always
	 * with the last */
	for (size_t i = n ? (n - 1) % (1 + n / 8) : 0; i < n; i += 1 + n / 8) {
		uint64_t end = i + 1 < n ? starts[i + 1] : off;
		if (tc_x86_prev_insn(code, size, BASE, BASE + end, &out) != 0 ||
		    out != BASE + starts[i])
			abort();
		/* inside the instruction: not a boundary */
		if (end - starts[i] > 1 &&
		    tc_x86_prev_insn(code, size, BASE, BASE + end - 1, &out) == 0)
			abort();
	}
	/* nothing before the function or past its bytes */
	if (tc_x86_prev_insn(code, size, BASE, BASE, &out) == 0 ||
	    tc_x86_prev_insn(code, size, BASE, BASE + size + 1, &out) == 0)
		abort();
out_free:
	free(code);
	free(starts);
	return 0;
}
