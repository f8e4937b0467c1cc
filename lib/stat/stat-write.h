/* stat-write.h - what the writers of a stat session share (stat-write.c: the values,
 * the caller's description, a breakdown unit's fields, the table; stat-write-csv.c;
 * stat-write-json.c; stat-write-interval.c). Private to lib/stat. */
#ifndef TACHO_STAT_STAT_WRITE_H
#define TACHO_STAT_STAT_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "output/output.h"
#include "tacho/counters.h"
#include "tacho/output.h"
#include "tacho/sim.h"
#include "tacho/stat.h"

/* The caller's description with the defaults for what its sz does not cover. */
struct about {
	char *const *argv;
	const char *target;
	unsigned repeat;
	const char *note;
	unsigned hot;
	enum tacho_sim_view hot_view;
	const struct tacho_sim_mca *mca;
	bool perf_layout;
	const char *stopped;
	bool metric_only;
	const char *const *warnings;
	size_t nwarnings;
};

/* The fields of a breakdown's unit, in their order as columns and keys. */
enum unit_field { UF_CPU, UF_SOCKET, UF_DIE, UF_CORE, UF_NODE, UF_NCPUS, UF_PID, UF_TID,
		  UF_COMM, UF_CGROUP, UF_COUNT };

extern const char *const tc_stat_unit_field_name[UF_COUNT];

/* values */
const char *tc_stat_fmt_human(double v, const char *unit, char *buf, size_t size);
const char *tc_stat_fmt_machine(double v, char *buf, size_t size);
bool tc_stat_has_value(enum tacho_count_status s);
const char *tc_stat_no_value_word(enum tacho_count_status s);
void tc_stat_json_value(struct tc_json *j, const char *key, double v, const char *unit);

/* a breakdown unit's fields */
const enum unit_field *tc_stat_unit_fields(enum tacho_stat_aggr a);
size_t tc_stat_unit_nfields(enum tacho_stat_aggr a);
const char *tc_stat_unit_csv(const struct tacho_stat_unit *u, enum unit_field f, char *buf,
			     size_t size);
void tc_stat_unit_json(struct tc_json *j, const struct tacho_stat_unit *u);

/* the simulation's sections of the JSON document (beside their tables) */
void tc_stat_json_hot(struct tc_json *j, const struct tacho_stat *s, const struct about *a);
void tc_stat_json_mca(struct tc_json *j, const struct about *a,
		      const struct tacho_sim_machine *mach);

/* perf stat's own layouts (-x, -j) */
bool tc_stat_perf_metric(const struct tacho_stat *s, size_t i, double *val, char *unit,
			 size_t usz);
double tc_stat_perf_variance(const struct tacho_stat_event *e);
bool tc_stat_perf_by_unit(enum tacho_stat_aggr a);
void tc_stat_perf_json_line(FILE *f, const char *interval, const struct tacho_stat_unit *un,
			    const struct tacho_count *k, const char *unit,
			    const double *variance, const char *munit, double mval);

/* the formats */
int tc_stat_write_csv(const struct tacho_stat *s, FILE *f, const struct tc_write_settings *w);
int tc_stat_write_perf_csv(const struct tacho_stat *s, const struct about *a, FILE *f,
			   const struct tc_write_settings *w);
int tc_stat_write_perf_json(const struct tacho_stat *s, const struct about *a, FILE *f);
int tc_stat_write_json(const struct tacho_stat *s, const struct about *a, FILE *f,
		       enum tacho_format fmt, const struct tc_write_settings *w);

#endif
