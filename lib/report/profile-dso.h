/* profile-dso.h - what other parts of the library (diff) ask of a loaded profile's
 * binaries beyond the public report.h: the build-id a recording holds for a binary. */
#ifndef TACHO_REPORT_PROFILE_DSO_H
#define TACHO_REPORT_PROFILE_DSO_H

#include <stddef.h>
#include <stdint.h>

struct tacho_profile;

/* The build-id recorded for the binary named name (a row's dso, as the profile spells
 * it) into bid (room for max bytes): its length; 0 when the recording holds none for it,
 * or holds two different ones (one path mapped from two builds: no single answer). */
size_t tc_profile_dso_build_id(const struct tacho_profile *p, const char *name, uint8_t *bid,
			       size_t max);

#endif
