/* flamegraph.h - the flame graph's drawing as a seam for pictures other than one
 * profile's: a tree of frames, each with a width, a fill and a title, drawn as
 * `report --format svg` draws (flamegraph.c: the layout, the labels' fitting, the
 * escaping, the script that zooms and searches). `diff --format svg` draws two
 * recordings' merged stacks through it. */
#ifndef TACHO_EXPORT_FLAMEGRAPH_H
#define TACHO_EXPORT_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tacho_profile;

struct tc_fg_frame {
	const char *name;      /* the label and the name searched and zoomed by */
	const char *sub;       /* orders siblings of one name (their binary); NULL: "" */
	uint32_t parent;       /* below its own index; frame 0, the root, has none */
	double value;          /* the width, in the units of the root's (the whole width) */
};

struct tc_fg_page {
	const char *heading;   /* plain text: escaped here */
	const struct tc_fg_frame *v;
	size_t n;              /* v[0] is the root; n 0: an empty picture */
	/* the fill of frame i, an SVG colour ("rgb(r,g,b)") of under size bytes */
	void (*fill)(void *arg, uint32_t i, char *buf, size_t size);
	/* the tooltip of frame i (its <title>), written to f through tc_fg_xml_put */
	void (*title)(void *arg, uint32_t i, FILE *f);
	void *arg;
};

/* Writes the whole SVG document: frames of a width under 0.1 pixel are left out,
 * siblings are in the order of their names (then subs), so that equal trees give equal
 * pictures. 0, -ENOMEM, -EINVAL (a parent not below its child), -EIO (f failed). */
int tc_fg_draw(FILE *f, const struct tc_fg_page *pg);

/* s as SVG text: XML's five escapes, control characters and bytes that are not UTF-8
 * as '?'. */
void tc_fg_xml_put(FILE *f, const char *s);

/* One frame of a stack: its function (or the process's command) and its binary. */
struct tc_fg_loc {
	const char *name;      /* "[unknown]" where unresolved */
	const char *dso;       /* NULL for the process's frame and unknown binaries */
};

/* Calls fn with each sample that the selected event and the filter keep: its stack
 * from the process's frame (locs[0], the command) down to the sampled function, and the
 * events the sample stands for (its period). fn's non-zero return stops the walk and is
 * returned. Also 0, -ENOMEM. */
int tc_profile_each_stack(struct tacho_profile *p,
			  int (*fn)(void *arg, const struct tc_fg_loc *locs, size_t n,
				    uint64_t period),
			  void *arg);

#endif
