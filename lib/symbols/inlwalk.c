/* inlwalk.c - the functions inlined at each address of a binary, from its DWARF: one
 * inlined frame as libdw gives it (tc_inl_fill, for the look-up by address and for the
 * walk), and the walk of every unit that the inline cache (inlcache.h) is made of, which
 * gives at every address what dwarf_getscopes would. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>

#include "symbols/inlcache.h"
#include "symbols/inlwalk.h"
#include "util/util.h"

/* The name of an inlined subroutine: that of the function it is a copy of (its
 * DW_AT_abstract_origin, which dwarf_attr_integrate follows), the linkage name first
 * (a C++ function's mangled one, which the report demangles), else DW_AT_name. */
static const char *inline_name(Dwarf_Die *die)
{
	static const unsigned at[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute a;

	for (size_t i = 0; i < ARRAY_SIZE(at); i++) {
		const char *s = dwarf_formstring(dwarf_attr_integrate(die, at[i], &a));
		if (s && *s)
			return s;
	}
	return NULL;
}

/* The frame of inlined subroutine die of unit cu: its function's name, the file and
 * line of its call. */
void tc_inl_fill(Dwarf_Die *die, Dwarf_Die *cu, struct tc_syminl *out)
{
	Dwarf_Files *files;
	Dwarf_Attribute a;
	Dwarf_Word w;
	size_t nfiles;

	out->name = inline_name(die);
	out->call_file = NULL;
	out->call_line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= INT32_MAX)
		out->call_line = (int)w;
	/* DW_AT_call_file indexes the unit's file table (0 is a file in DWARF 5) */
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && w < nfiles)
		out->call_file = dwarf_filesrc(files, w, NULL, NULL);
}

/* --- the inline cache, built in one walk of the DWARF ---
 *
 * dwarf_getscopes (which inlines_libdw asks) walks a unit from its root: of a DIE's
 * children, in order, the first whose address ranges hold the address is taken (any
 * tag: each child is asked), and the walk goes into it when its tag is one that holds
 * scopes; the innermost DIE so reached ends it. The answer is the innermost inlined
 * subroutine on that path, unless a subprogram is below it (then none). The walk below
 * gives each DIE the addresses it would be taken for, its ranges less those its
 * earlier siblings took, inside its parent's own (the unit's: the address ranges that
 * name it), and paints the inlined subroutines' (and the subprograms' under them)
 * over their parents': the painted answer at an address is libdw's. */

/* A set of [lo, hi) address ranges, sorted and apart, two u64 each. */
struct ivs {
	uint64_t *v;
	size_t n, cap;   /* in ranges */
};

static int ivs_add(struct ivs *s, uint64_t lo, uint64_t hi)
{
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 8;
		uint64_t *p = realloc(s->v, c * 2 * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = c;
	}
	s->v[2 * s->n] = lo;
	s->v[2 * s->n + 1] = hi;
	s->n++;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Sorts s and merges the ranges that touch; empty ones go. */
static void ivs_norm(struct ivs *s)
{
	size_t w = 0;

	if (s->n > 1)
		qsort(s->v, s->n, 2 * sizeof(*s->v), cmp_range);
	for (size_t i = 0; i < s->n; i++) {
		uint64_t lo = s->v[2 * i], hi = s->v[2 * i + 1];
		if (lo >= hi)
			continue;
		if (w && lo <= s->v[2 * w - 1]) {
			if (hi > s->v[2 * w - 1])
				s->v[2 * w - 1] = hi;
			continue;
		}
		s->v[2 * w] = lo;
		s->v[2 * w + 1] = hi;
		w++;
	}
	s->n = w;
}

/* out = a & b. */
static int ivs_and(const struct ivs *a, const struct ivs *b, struct ivs *out)
{
	size_t i = 0, j = 0;
	int err = 0;

	out->n = 0;
	while (!err && i < a->n && j < b->n) {
		uint64_t lo = a->v[2 * i] > b->v[2 * j] ? a->v[2 * i] : b->v[2 * j];
		uint64_t hi = a->v[2 * i + 1] < b->v[2 * j + 1] ? a->v[2 * i + 1] : b->v[2 * j + 1];
		if (lo < hi)
			err = ivs_add(out, lo, hi);
		if (a->v[2 * i + 1] < b->v[2 * j + 1])
			i++;
		else
			j++;
	}
	return err;
}

/* s = s - t, with tmp for the work. */
static int ivs_sub(struct ivs *s, const struct ivs *t, struct ivs *tmp)
{
	size_t j = 0;
	int err = 0;

	tmp->n = 0;
	for (size_t i = 0; i < s->n && !err; i++) {
		uint64_t lo = s->v[2 * i], hi = s->v[2 * i + 1];
		while (j < t->n && t->v[2 * j + 1] <= lo)
			j++;
		for (size_t k = j; k < t->n && t->v[2 * k] < hi && !err; k++) {
			if (t->v[2 * k] > lo)
				err = ivs_add(tmp, lo, t->v[2 * k]);
			if (t->v[2 * k + 1] > lo)
				lo = t->v[2 * k + 1];
		}
		if (!err && lo < hi)
			err = ivs_add(tmp, lo, hi);
	}
	if (!err) {
		struct ivs x = *s;
		*s = *tmp;
		*tmp = x;
	}
	return err;
}

/* One painted range: [lo, hi) answers frame (NONE: nothing inlined); seq orders
 * those with the same start, outer first. */
struct paint {
	uint64_t lo, hi;
	uint32_t frame, seq;
};

#define FRAME_NONE UINT32_MAX
/* The deepest nesting walked: DWARF a fuzzer made may nest without end. */
#define SCOPE_DEPTH_MAX 256

struct inl_walk {
	uint64_t modbias;              /* module address = ELF address + modbias */
	Dwarf_Die *cu;
	Dwarf_Addr bias;               /* module address = DWARF address + bias */
	struct ivs lv[SCOPE_DEPTH_MAX + 1][2];   /* each depth's left-over and child's */
	struct ivs tmp, own;
	struct paint *p;
	size_t np, cp;
	struct tc_syminl *fr;          /* the painted frames */
	size_t nfr, cfr;
};

static int paint(struct inl_walk *w, const struct ivs *at, uint32_t frame)
{
	for (size_t i = 0; i < at->n; i++) {
		if (w->np == w->cp) {
			size_t c = w->cp ? w->cp * 2 : 4096;
			struct paint *p = realloc(w->p, c * sizeof(*p));
			if (!p)
				return -ENOMEM;
			w->p = p;
			w->cp = c;
		}
		if (w->np >= UINT32_MAX)
			return -TACHO_EOUTOFRANGE;
		w->p[w->np] = (struct paint){ at->v[2 * i], at->v[2 * i + 1], frame,
					      (uint32_t)w->np };
		w->np++;
	}
	return 0;
}

/* The frame of inlined subroutine die (as inlines_libdw makes it) into w->fr: its
 * index, or FRAME_NONE when libdw gives none (no abstract origin to follow). */
static int inl_frame(struct inl_walk *w, Dwarf_Die *die, uint32_t *out)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;

	*out = FRAME_NONE;
	if (!dwarf_formref_die(dwarf_attr(die, DW_AT_abstract_origin, &a), &origin))
		return 0;
	if (w->nfr == w->cfr) {
		size_t c = w->cfr ? w->cfr * 2 : 1024;
		struct tc_syminl *p = realloc(w->fr, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->fr = p;
		w->cfr = c;
	}
	if (w->nfr >= FRAME_NONE)
		return -TACHO_EOUTOFRANGE;
	tc_inl_fill(die, w->cu, &w->fr[w->nfr]);
	*out = (uint32_t)w->nfr++;
	return 0;
}

/* The children of parent, which is taken for the addresses in w->lv[depth][0] (they
 * are used up), its answer ctx (the frame painted there). */
static int inl_children(struct inl_walk *w, Dwarf_Die *parent, int depth, uint32_t ctx)
{
	struct ivs *left = &w->lv[depth][0], *mine = &w->lv[depth][1];
	Dwarf_Die child;
	int err = 0;

	if (depth >= SCOPE_DEPTH_MAX || !left->n || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		uint32_t frame = ctx;

		w->own.n = 0;
		while (!err && (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
			err = ivs_add(&w->own, lo + w->bias, hi + w->bias);
		if (err || !w->own.n)
			continue;
		ivs_norm(&w->own);
		/* what it is taken for: its ranges that no earlier sibling took */
		err = ivs_and(&w->own, left, mine);
		if (!err && mine->n)
			err = ivs_sub(left, mine, &w->tmp);
		if (err || !mine->n)
			continue;
		if (tag == DW_TAG_inlined_subroutine)
			err = inl_frame(w, &child, &frame);
		else if (tag == DW_TAG_subprogram)
			frame = FRAME_NONE;   /* libdw's chain stops at a subprogram */
		if (!err && frame != ctx)
			err = paint(w, mine, frame);
		if (err)
			break;
		switch (tag) {
		case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
		case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
		case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
		case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type: {
			/* the child's addresses become the next depth's to hand out */
			struct ivs x = w->lv[depth + 1][0];
			w->lv[depth + 1][0] = *mine;
			*mine = x;
			err = inl_children(w, &child, depth + 1, frame);
			break;
		}
		default:
			break;   /* the innermost DIE at its addresses: the walk ends there */
		}
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

static int cmp_paint(const void *a, const void *b)
{
	const struct paint *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Each unit's address ranges (module addresses), from the address range table that
 * dwfl_module_addrdie asks: those that name the unit at offset cuoff, into out. */
struct cu_range {
	uint64_t cuoff, lo, hi;
};

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->cuoff != y->cuoff)
		return x->cuoff < y->cuoff ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The paint's answers as ranges of the cache (laminar: two painted ranges are apart or
 * one holds the other, so the innermost open one answers). */
static int paint_ranges(struct inl_walk *w, struct tc_inlbuild *b)
{
	uint64_t *pts = NULL;
	size_t npts = 0, cpts = 0, top = 0, next = 0, w2 = 0;
	uint32_t *stack = NULL;
	int err = 0;

	if (w->np)
		qsort(w->p, w->np, sizeof(*w->p), cmp_paint);
	stack = malloc((w->np + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < w->np && !err; i++) {
		err = tc_u64_push(&pts, &npts, &cpts, w->p[i].lo);
		if (!err)
			err = tc_u64_push(&pts, &npts, &cpts, w->p[i].hi);
	}
	if (!err && npts)
		qsort(pts, npts, sizeof(*pts), tc_u64_cmp);
	for (size_t i = 0; i < npts; i++)
		if (!w2 || pts[i] != pts[w2 - 1])
			pts[w2++] = pts[i];
	for (size_t i = 0; i < w2 && !err; i++) {
		uint64_t pt = pts[i];
		uint32_t f = FRAME_NONE;

		while (top && w->p[stack[top - 1]].hi <= pt)
			top--;
		while (next < w->np && w->p[next].lo <= pt) {
			if (w->p[next].hi > pt)
				stack[top++] = (uint32_t)next;
			next++;
		}
		if (top)
			f = w->p[stack[top - 1]].frame;
		if (pt < w->modbias)
			continue;
		err = tc_inlbuild_add(b, pt - w->modbias, f == FRAME_NONE ? NULL : &w->fr[f],
				      f == FRAME_NONE ? 0 : 1);
	}
	free(stack);
	free(pts);
	return err;
}

int tc_inlwalk_build(Dwfl_Module *mod, uint64_t modbias, const uint8_t *bid, size_t bidlen,
		     void **image, size_t *len)
{
	struct inl_walk *w = calloc(1, sizeof(*w));
	struct tc_inlbuild *b = NULL;
	struct cu_range *cr = NULL;
	Dwarf_Addr dwbias, cubias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &dwbias);
	Dwarf_Die *cu = NULL;
	Dwarf_Aranges *ar;
	size_t nar = 0, ncr = 0;
	int err = 0;

	if (!w)
		return -ENOMEM;
	w->modbias = modbias;
	if (!dw || dwarf_getaranges(dw, &ar, &nar) != 0 || !nar)
		err = -ENOENT;
	if (!err && !(cr = calloc(nar, sizeof(*cr))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < nar; i++) {
		Dwarf_Addr a;
		Dwarf_Word l;
		Dwarf_Off off;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &a, &l, &off) != 0 || !l)
			continue;
		cr[ncr++] = (struct cu_range){ off, a + dwbias, a + dwbias + l };
	}
	if (!err && ncr)
		qsort(cr, ncr, sizeof(*cr), cmp_cu_range);
	while (!err && (cu = dwfl_module_nextcu(mod, cu, &cubias))) {
		Dwarf_Off off = dwarf_dieoffset(cu);
		size_t lo = 0, hi = ncr;
		struct ivs *root = &w->lv[0][0];

		/* the unit's ranges in the table: the first with its offset, on */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cr[mid].cuoff < off)
				lo = mid + 1;
			else
				hi = mid;
		}
		root->n = 0;
		for (size_t i = lo; i < ncr && cr[i].cuoff == off && !err; i++)
			err = ivs_add(root, cr[i].lo, cr[i].hi);
		if (err || !root->n)
			continue;
		ivs_norm(root);
		w->cu = cu;
		w->bias = cubias;
		err = inl_children(w, cu, 0, FRAME_NONE);
	}
	/* nothing inlined anywhere: kept all the same (no range), not walked again */
	if (!err)
		err = tc_inlbuild_new(&b);
	if (!err)
		err = paint_ranges(w, b);
	if (!err)
		err = tc_inlbuild_image(b, bid, bidlen, image, len);
	tc_inlbuild_free(b);
	for (size_t i = 0; i <= SCOPE_DEPTH_MAX; i++) {
		free(w->lv[i][0].v);
		free(w->lv[i][1].v);
	}
	free(w->tmp.v);
	free(w->own.v);
	free(w->p);
	free(w->fr);
	free(w);
	free(cr);
	return err;
}
