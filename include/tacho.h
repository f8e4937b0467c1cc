/* tacho.h - the one public header of libtacho, the CPU performance-monitoring library.
 *
 * It includes every area of the interface, each in its own header under tacho/, in
 * dependency order: errors and diagnostics, writing results (the formats every writer
 * shares), CPU detection, events, launching programs, simulated events (valgrind),
 * counters, stat sessions, the time-stamp counter, marks for traces, the memory
 * hierarchy measured, what the machine allows, regions, the benchmark harness,
 * sampling (recording, its reports, the build-id cache), model-specific registers,
 * traces, live monitoring, two measurements compared. Read them like a manual: every function states what it
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
 *    the log callback (tacho_set_log) and through struct tacho_diag where input is bad;
 *  - every struct can grow, and says by which rule (docs/architecture.md, "An API that
 *    can grow"): options and results the caller provides carry `size_t sz` first, set to
 *    sizeof by the caller ("options", "sized"); arrays cross with their element size,
 *    sizeof(array[0]) ("element size"); what the library allocates is opaque or read
 *    through pointers, never indexed with the caller's sizeof ("handed out"); the small
 *    parts a caller embeds or indexes never change ("fixed"). Fields are only ever
 *    added at the end; a size below a struct's first version is -EINVAL;
 *  - the library says which version it is (tacho_version, tacho_version_number), and a
 *    program checks at start-up that it runs with a library at least as new as the
 *    header it was built with: TACHO_CHECK_VERSION(&diag).
 */
#ifndef TACHO_H
#define TACHO_H

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/cpu.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/sim.h"
#include "tacho/counters.h"
#include "tacho/stat.h"
#include "tacho/tsc.h"
#include "tacho/trace.h"
#include "tacho/cache.h"
#include "tacho/machine.h"
#include "tacho/regions.h"
#include "tacho/bench.h"
#include "tacho/record.h"
#include "tacho/report.h"
#include "tacho/symbols.h"
#include "tacho/msr.h"
#include "tacho/timeline.h"
#include "tacho/live.h"
#include "tacho/diff.h"

#endif /* TACHO_H */
