/* tacho.h - the one public header of libtacho, the CPU performance-monitoring library.
 *
 * It includes every area of the interface, each in its own header under tacho/, in
 * dependency order: errors and diagnostics, writing results (the formats every writer
 * shares), CPU detection, events, launching programs, counters, stat sessions, the
 * time-stamp counter, what the machine allows, regions, the benchmark harness,
 * sampling, live monitoring. Read them like a manual: every function states what it
 * does, what it returns on error, who owns what afterwards and whether it may be
 * called from several threads at once.
 *
 * Conventions, everywhere:
 *  - a function that can fail returns 0 (or a count) on success and a negative code on
 *    failure: -errno for an error of the operating system, -TACHO_E... for one of tacho's
 *    own; tacho_strerror() turns either into a sentence;
 *  - _new/_free: objects the caller owns; _init/_exit: storage the caller provides;
 *    every _free and _exit accepts NULL;
 *  - the library never prints, never exits and never runs a shell; it reports through
 *    the log callback (tacho_set_log) and through struct tacho_diag where input is bad.
 */
#ifndef TACHO_H
#define TACHO_H

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/cpu.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/counters.h"
#include "tacho/stat.h"
#include "tacho/tsc.h"
#include "tacho/machine.h"
#include "tacho/regions.h"
#include "tacho/bench.h"
#include "tacho/sample.h"
#include "tacho/live.h"

#endif /* TACHO_H */
