/* x86len.c - lengths of x86-64 instructions, to find the instruction before a
 * trap-type sample's IP.
 *
 * A data breakpoint is a trap: the CPU reports it after the storing instruction has
 * retired, so the sampled IP is the address of the NEXT instruction (SDM Vol. 3B
 * §18.2.4 / §17.3.1.2 "debug exceptions ... trap-class"; VTune's note in seed 004, "the
 * true location will always be somewhere before"). x86 code cannot be decoded backwards
 * reliably (lengths vary from 1 to 15 bytes), but it can be decoded forwards from a known
 * boundary: the function's first byte. Only lengths are needed, so the decoder knows the
 * shape of each opcode (ModRM? immediate?) and nothing of its meaning. Opcode facts come
 * from the SDM Vol. 2, Appendix A (opcode maps) and §2.1-2.3 (prefixes, ModRM, SIB,
 * VEX), and §2.7 (EVEX); AMD's XOP from the APM Vol. 4 §1.2. */
#include <errno.h>
#include <string.h>

#include "symbols/symbols.h"
#include "tacho/errors.h"

enum {
	M = 0x01,      /* a ModRM byte follows the opcode */
	I8 = 0x02,     /* 8-bit immediate */
	IZ = 0x04,     /* 16- or 32-bit immediate (operand size) */
	IV = 0x08,     /* 16-, 32- or 64-bit immediate (mov reg, imm with REX.W) */
	I16 = 0x10,    /* 16-bit immediate */
	MOFFS = 0x20,  /* an address-sized offset (mov al/eax, [moffs]) */
	BAD = 0x40,    /* invalid in 64-bit mode, or a prefix handled elsewhere */
	G3 = 0x80,     /* F6/F7: the TEST form (ModRM.reg 0 or 1) has an immediate */
	J32 = 0x100,   /* call/jmp rel32: 32 bits in 64-bit mode even after a 66 prefix */
};

/* The one-byte opcode map (SDM Vol. 2 Table A-2). */
static const uint16_t one[256] = {
	[0x00 ... 0x03] = M, [0x04] = I8, [0x05] = IZ, [0x06 ... 0x07] = BAD,
	[0x08 ... 0x0b] = M, [0x0c] = I8, [0x0d] = IZ, [0x0e] = BAD, [0x0f] = BAD,
	[0x10 ... 0x13] = M, [0x14] = I8, [0x15] = IZ, [0x16 ... 0x17] = BAD,
	[0x18 ... 0x1b] = M, [0x1c] = I8, [0x1d] = IZ, [0x1e ... 0x1f] = BAD,
	[0x20 ... 0x23] = M, [0x24] = I8, [0x25] = IZ, [0x26] = BAD, [0x27] = BAD,
	[0x28 ... 0x2b] = M, [0x2c] = I8, [0x2d] = IZ, [0x2e] = BAD, [0x2f] = BAD,
	[0x30 ... 0x33] = M, [0x34] = I8, [0x35] = IZ, [0x36] = BAD, [0x37] = BAD,
	[0x38 ... 0x3b] = M, [0x3c] = I8, [0x3d] = IZ, [0x3e] = BAD, [0x3f] = BAD,
	[0x40 ... 0x4f] = BAD,   /* REX */
	[0x60 ... 0x62] = BAD, [0x63] = M, [0x64 ... 0x67] = BAD,
	[0x68] = IZ, [0x69] = M | IZ, [0x6a] = I8, [0x6b] = M | I8,
	[0x70 ... 0x7f] = I8,
	[0x80] = M | I8, [0x81] = M | IZ, [0x82] = BAD, [0x83] = M | I8, [0x84 ... 0x8f] = M,
	[0x9a] = BAD,
	[0xa0 ... 0xa3] = MOFFS, [0xa8] = I8, [0xa9] = IZ,
	[0xb0 ... 0xb7] = I8, [0xb8 ... 0xbf] = IV,
	[0xc0 ... 0xc1] = M | I8, [0xc2] = I16, [0xc4 ... 0xc5] = BAD, [0xc6] = M | I8,
	[0xc7] = M | IZ, [0xc8] = I16 | I8, [0xca] = I16, [0xcd] = I8, [0xce] = BAD,
	[0xd0 ... 0xd3] = M, [0xd4 ... 0xd6] = BAD, [0xd8 ... 0xdf] = M,
	[0xe0 ... 0xe7] = I8, [0xe8 ... 0xe9] = J32, [0xea] = BAD, [0xeb] = I8,
	[0xf0] = BAD, [0xf2 ... 0xf3] = BAD, [0xf6 ... 0xf7] = M | G3, [0xfe ... 0xff] = M,
};

/* The two-byte map 0F xx (Table A-3): almost everything has a ModRM byte. */
static const uint8_t two[256] = {
	[0x00 ... 0x03] = M, [0x04] = BAD, [0x0a] = BAD, [0x0c] = BAD, [0x0d] = M,
	[0x0f] = M | I8,     /* 3DNow!: ModRM, then an opcode byte in the immediate slot */
	[0x10 ... 0x1f] = M, [0x20 ... 0x23] = M, [0x24 ... 0x27] = BAD, [0x28 ... 0x2f] = M,
	[0x38] = BAD, [0x39] = BAD, [0x3a] = BAD, [0x3b ... 0x3f] = BAD,
	[0x40 ... 0x4f] = M, [0x50 ... 0x6f] = M, [0x70 ... 0x73] = M | I8, [0x74 ... 0x76] = M,
	[0x78 ... 0x79] = M, [0x7a ... 0x7b] = BAD, [0x7c ... 0x7f] = M,
	[0x80 ... 0x8f] = IZ, [0x90 ... 0x9f] = M,
	[0xa3] = M, [0xa4] = M | I8, [0xa5] = M, [0xa6 ... 0xa7] = BAD, [0xab] = M,
	[0xac] = M | I8, [0xad ... 0xaf] = M,
	[0xb0 ... 0xb7] = M, [0xb8 ... 0xb9] = M, [0xba] = M | I8, [0xbb ... 0xbf] = M,
	[0xc0 ... 0xc1] = M, [0xc2] = M | I8, [0xc3] = M, [0xc4 ... 0xc6] = M | I8, [0xc7] = M,
	[0xd0 ... 0xff] = M,
};

/* Lengths of ModRM + SIB + displacement, given the ModRM at p. 0 when cut short. */
static unsigned modrm_len(const uint8_t *p, size_t avail)
{
	unsigned mod, rm, n = 1;

	if (avail < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {              /* SIB follows */
		if (avail < 2)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;     /* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		n += 4;             /* RIP-relative disp32 */
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

unsigned tc_x86_insn_len(const uint8_t *code, size_t avail)
{
	size_t i = 0;
	bool opsize = false, adsize = false, rexw = false;
	unsigned flags, n, imm = 0;
	uint8_t op;

	/* legacy prefixes (§2.1.1) and REX (§2.2.1); at most 14 before the 15-byte limit.
	 * A REX that a legacy prefix follows is ignored, but still part of the
	 * instruction: only the one right before the opcode counts. */
	for (; i < avail && i < 14; i++) {
		uint8_t b = code[i];
		if ((b & 0xf0) == 0x40) {
			rexw = b & 8;
			continue;
		}
		if (b == 0x66)
			opsize = true;
		else if (b == 0x67)
			adsize = true;
		else if (!(b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 ||
			   b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65))
			break;
		rexw = false;
	}
	/* REX.W makes the operand 64 bits whatever a 66 prefix says (§2.2.1.2): an
	 * immediate is then 32 bits (sign-extended), or 64 for mov reg, imm */
	if (rexw)
		opsize = false;
	if (i >= avail)
		return 0;
	op = code[i++];

	if (op == 0x8f && i < avail && (code[i] & 0x1f) >= 8) {
		/* XOP (AMD APM Vol. 4 §1.2): 8F with a map of 8 or more, where POP's
		 * ModRM.reg (which must be 0) would have bit 3 set. Two payload bytes,
		 * the opcode, ModRM; map 8 has an imm8, map 9 none, map 0Ah an imm32. */
		unsigned map = code[i] & 0x1f;
		if (map > 10 || i + 3 > avail)
			return 0;
		i += 3;
		n = modrm_len(code + i, avail - i);
		if (!n)
			return 0;
		i += n + (map == 8 ? 1 : map == 10 ? 4 : 0);
		return i <= avail && i <= 15 ? (unsigned)i : 0;
	}

	if (op == 0xc4 || op == 0xc5 || op == 0x62) {
		/* VEX (§2.3) and EVEX (§2.7): in 64-bit mode these bytes always start one.
		 * The map decides the immediate: 0F3A always has an imm8; in map 0F the
		 * same opcodes as legacy 0F (70-73, C2, C4-C6) have one. */
		unsigned map;
		size_t payload = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;
		if (i + payload + 1 > avail)
			return 0;
		map = op == 0xc5 ? 1 : (code[i] & (op == 0x62 ? 0x07 : 0x1f));
		i += payload;
		op = code[i++];
		if (map == 1 && op == 0x77)     /* vzeroupper / vzeroall: no ModRM */
			return i <= 15 ? (unsigned)i : 0;
		n = modrm_len(code + i, avail - i);
		if (!n)
			return 0;
		i += n;
		if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
					      (op >= 0xc4 && op <= 0xc6))))
			i += 1;
		else if (map == 0 || map > 7)
			return 0;
		return i <= avail && i <= 15 ? (unsigned)i : 0;
	}

	if (op == 0x0f) {
		if (i >= avail)
			return 0;
		op = code[i++];
		if (op == 0x38 || op == 0x3a) {        /* three-byte maps: ModRM always */
			unsigned has_imm = op == 0x3a;
			if (i >= avail)
				return 0;
			i++;                            /* the third opcode byte */
			n = modrm_len(code + i, avail - i);
			if (!n)
				return 0;
			i += n + has_imm;
			return i <= avail && i <= 15 ? (unsigned)i : 0;
		}
		flags = two[op];
		if (flags & BAD)
			return 0;
		if (flags & IZ)
			imm += 4;               /* Jcc rel32: 32 bits in 64-bit mode */
	} else {
		flags = one[op];
		if (flags & BAD)
			return 0;
		if (flags & IZ)
			imm += opsize ? 2 : 4;
		if (flags & IV)
			imm += rexw ? 8 : opsize ? 2 : 4;
		if (flags & MOFFS)
			imm += adsize ? 4 : 8;
		if (flags & J32)
			imm += 4;
	}
	if (flags & I8)
		imm += 1;
	if (flags & I16)
		imm += 2;
	if (flags & M) {
		n = modrm_len(code + i, avail - i);
		if (!n)
			return 0;
		/* F6/F7 /0 and /1 are TEST r/m, imm; the other forms have no immediate */
		if ((flags & G3) && ((code[i] >> 3) & 7) < 2)
			imm += op == 0xf6 ? 1 : opsize ? 2 : 4;
		i += n;
	}
	i += imm;
	return i <= avail && i <= 15 ? (unsigned)i : 0;
}

int tc_x86_prev_insn(const uint8_t *code, size_t len, uint64_t func_start, uint64_t ip,
		     uint64_t *out)
{
	uint64_t off = 0, prev = 0, want;

	if (ip <= func_start || ip - func_start > len)
		return -TACHO_EPARSE;
	want = ip - func_start;
	while (off < want) {
		unsigned n = tc_x86_insn_len(code + off, (size_t)(len - off));
		if (!n)
			return -TACHO_EPARSE;
		prev = off;
		off += n;
	}
	if (off != want)
		return -TACHO_EPARSE;  /* ip is not an instruction boundary from here */
	*out = func_start + prev;
	return 0;
}
