/* off-regions.c - a program instrumented with regions and marks, built with
 * -DTACHO_DISABLE and without libtacho (the Makefile links no library): every call
 * must compile to a no-op, and the program prints what the calls returned. */
#include <stdio.h>

#include "tacho.h"

static int work(int n)
{
	TACHO_REGION_SCOPE("scoped");
	int s = 0;

	for (int i = 0; i < n; i++)
		s += i;
	return s;
}

int main(void)
{
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = "page-faults" };
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_regions_report *r = (struct tacho_regions_report *)&o;
	const char *why = NULL;
	int init = tacho_regions_init(&o, &d);
	int b = tacho_region_begin("outer");
	int s = work(10);
	int e = tacho_region_end("outer");
	int m = tacho_mark("chan", 1) | tacho_mark_counter("level", 2);
	int rn = tacho_regions_report_new(&r);
	enum tacho_count_status st = tacho_regions_report_status(r, 0, &why);

	printf("init=%d begin=%d end=%d sum=%d mark=%d traced=%d report=%d null=%d\n", init,
	       b, e, s, m, tacho_trace_active(), rn, r == NULL);
	printf("find=%d nevents=%zu event=%d status=%d why=%s notes='%s' write=%d\n",
	       tacho_regions_report_find(r, "outer") == NULL &&
		       tacho_regions_report_nregions(r) == 0 &&
		       tacho_regions_report_region(r, 0) == NULL,
	       tacho_regions_report_nevents(r), tacho_regions_report_event(r, 0) == NULL,
	       st == TACHO_COUNT_NOT_COUNTED, why, tacho_regions_report_notes(r),
	       tacho_regions_report_write(r, stdout, TACHO_FORMAT_TABLE, NULL));
	tacho_regions_report_free(r);
	tacho_regions_reset();
	return tacho_regions_write();
}
