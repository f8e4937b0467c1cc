# Makefile - the one build of libtacho, the tacho binary, tests, examples, benchmarks and
# fuzz targets: non-recursive within a build tree; `make test` builds its four trees
# with one sub-make each under one jobserver, so that their compiles overlap.
#
#   make                  libtacho.a, libtacho.so, tacho, tacho.pc in $(BUILD) (default build/)
#   make tests            that, the test binaries, the examples and the tests' helper programs
#   make tests-so         $(BUILD)/so: tacho and the tests that use only the public API
#                         linked against libtacho.so, and the e2e tests that run tacho
#   make check            both of those, then the suite of $(BUILD) and $(BUILD)/so
#   make test             the README's test command, from a clean clone: installs what is
#                         missing (scripts/deps.sh), builds build/ (with build/so), build/asan
#                         (ASan+UBSan), build/tsan (TSan, the concurrency tests) and the
#                         libFuzzer targets with warnings as errors, then
#                         scripts/run-tests.sh runs every test binary of the trees and
#                         each fuzz target (its corpus, then FUZZ_SECONDS of fuzzing) as
#                         parallel jobs, two per core; about 1 min 30 s on 2 cores from a
#                         clean clone (measured 1:24 to 1:48, a third of it building)
#   make fuzz-long        each fuzz target to 10 M executions or FUZZ_LONG_SECONDS (600), one after another
#   make deb              the Debian packages tacho, libtacho0 and libtacho-dev built from a
#                         copy of the source with dpkg-buildpackage, checked with lintian,
#                         unpacked and run (scripts/check-deb.sh; a few minutes, so not in
#                         `make test`); the .debs land in build/deb
#   make demo             install what is missing, build, run tacho on a bundled workload
#   make install PREFIX=/usr/local DESTDIR=
#                         the library, header, tacho.pc, tacho, its manual pages and its
#                         bash and zsh completions (MANDIR, BASHCOMPDIR, ZSHCOMPDIR), the
#                         Python binding (PYTHONDIR)
#   make SAN=1            build with AddressSanitizer and UndefinedBehaviorSanitizer
#   make SAN=thread BUILD=build/tsan tests-tsan
#                         the library and the concurrency tests (TSAN_TEST_SRC) with
#                         ThreadSanitizer: the third tree of `make test`, kept to the tests
#                         whose threads share state, so that it adds seconds, not minutes
#   make BUILD=build-x    keep a separate build tree (parallel work, variants)
#
# A change of compiler or flags (CC, CPPFLAGS, CFLAGS, SAN, OPT, LDFLAGS) rebuilds what
# they made (the stamps $(BUILD)/flags.*); nothing is ever deleted as an intermediate, so
# a second `make` after a build runs nothing.

VERSION := $(shell sed -n 's/^\#define TACHO_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' include/tacho/errors.h | paste -sd.)
SOVERSION := 0

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
PCDIR   ?= $(LIBDIR)/pkgconfig
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
# The Python binding (python/tacho) goes where Debian's python3 looks: the version-less
# dist-packages under /usr, the versioned one under any other prefix (/usr/local/lib/
# python3.11/dist-packages); evaluated only by install
PYTHON  ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(shell \
	$(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)/dist-packages)

CC      ?= cc
AR      ?= ar
CLANG   ?= clang
WERROR  ?= 0
SAN     ?= 0

WARNINGS := -Wall -Wextra -Wshadow -Wformat=2 -Wformat-overflow=2 -Wstrict-prototypes \
	-Wmissing-prototypes -Wold-style-definition -Wpointer-arith -Wvla -Wundef \
	-Wcast-align -Wwrite-strings -Wnull-dereference -Wimplicit-fallthrough \
	-Wno-unused-parameter -Wno-missing-field-initializers -Wno-format-nonliteral
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif

OPT      ?= -O2 -g
SANFLAGS :=
ifeq ($(SAN),1)
OPT      := -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
endif
ifeq ($(SAN),thread)
OPT      := -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=thread
endif

# The pkg-config modules libtacho links (tacho.pc's Requires.private says them, so a
# static link gets their own dependencies from their .pc files). libpfm4 (which has no
# .pc) is not linked: its header only; lib/events/pfm.c loads libpfm.so.4 at the first
# CPU-specific name, which saves every command the 0.8 ms its start-up cost. Nor is
# libdw: lib/util/elfutils.c loads libdw.so.1 at the first ELF symbol, line or probe,
# which saves every other command (and every program linked with libtacho) 0.3 ms.
LIB_PC    := zlib libtraceevent
DW_CFLAGS := $(shell pkg-config --cflags libdw 2>/dev/null)
DW_LIBS   := $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf)
# libtraceevent: tracepoint payloads decoded from the format text a recording keeps
TEP_CFLAGS := $(shell pkg-config --cflags libtraceevent 2>/dev/null || echo -I/usr/include/traceevent)
TEP_LIBS   := $(shell pkg-config --libs libtraceevent 2>/dev/null || echo -ltraceevent)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# capstone: report --annotate's disassembler, its headers only: lib/report/annotate.c
# loads libcapstone.so at the first annotate (dlopen), which saves every command the
# millisecond of start-up the linked library cost; zlib: the gzip of report --format
# pprof (docs/report.md says why these two)
# zstd: report -i of perf record -z's compressed perf.data, its header only (zstd.h):
# lib/report/perfdata-zstd.c loads libzstd.so.1 at the first compressed record
CS_CFLAGS := $(shell pkg-config --cflags capstone 2>/dev/null)
Z_LIBS    := $(shell pkg-config --libs zlib 2>/dev/null || echo -lz)
# ncurses (tacho top's screen) and libmicrohttpd (tacho serve's HTTP) are the command's
# alone (libtacho writes the documents they carry, and needs neither), and neither is
# linked: their headers only. cli/top-curses.c loads libncursesw.so.6 when top's screen
# starts, cli/serve/cmd-serve.c libmicrohttpd.so.12 when serve starts (dlopen), which saves
# every other command their start-up (0.19 ms and 1.6 ms of CPU at each exec here).
CLI_LIBS  :=

override CPPFLAGS += -Iinclude -Ilib -D_GNU_SOURCE
override CFLAGS   += -std=gnu11 $(OPT) $(WARNINGS) $(SANFLAGS) -fPIC -fvisibility=hidden \
	$(DW_CFLAGS) $(TEP_CFLAGS) $(CS_CFLAGS)
override LDFLAGS  += $(SANFLAGS)
LIBS     := $(TEP_LIBS) $(Z_LIBS) -lm -lpthread -ldl
# The sanitizer builds (and the fuzzers) link libdw all the same, so that lib/util/
# elfutils.c's dlopen finds it loaded: GCC 12's LeakSanitizer crashes at exit ("Tracer
# caught signal 11") scanning the dynamic TLS of a library loaded with dlopen, and
# libdw's and libelf's error numbers are __thread. The release and libtacho.so trees
# load it as users' do.
ifneq ($(SAN),0)
LIBS     += $(DW_LIBS)
endif
FUZZ_LIBS := $(LIBS) $(DW_LIBS)

LIB_SRC   := $(sort $(wildcard lib/*/*.c))
CLI_SRC   := $(sort $(wildcard cli/*.c cli/*/*.c))
TEST_SRC  := $(sort $(wildcard tests/unit/*.c tests/e2e/*.c))
TEST_LIB_SRC := $(sort $(wildcard tests/lib/*.c))
EX_SRC    := $(sort $(wildcard examples/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))
FUZZ_SRC  := $(sort $(wildcard fuzz/fuzz-*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
TEST_LIB_OBJ := $(TEST_LIB_SRC:%.c=$(BUILD)/%.o)
EX_BIN    := $(patsubst %.c,$(BUILD)/%,$(EX_SRC))
BENCH_BIN := $(patsubst %.c,$(BUILD)/%,$(BENCH_SRC))
FUZZ_BIN  := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

STATIC := $(BUILD)/libtacho.a
SHARED := $(BUILD)/libtacho.so.$(VERSION)
TACHO  := $(BUILD)/tacho
PC     := $(BUILD)/tacho.pc
# for programs built against this build tree, uninstalled: pkg-config prefers
# NAME-uninstalled.pc when it finds one on PKG_CONFIG_PATH (PKG_CONFIG_PATH=build)
PC_UNINST := $(BUILD)/tacho-uninstalled.pc
# the manual pages ($(BUILD)/man/*.1) and the bash and zsh completions
# ($(BUILD)/completion/), written by the tacho just built from its own tables (cli/doc.c)
CLI_DOCS := $(BUILD)/cli-docs.stamp

.PHONY: all lib tests tests-tsan tests-so examples benches fuzz check test test-trees test-tree-release \
	test-tree-asan test-tree-tsan test-tree-fuzz fuzz-long demo deb install uninstall clean deps bench test-links FORCE
all: lib $(TACHO) $(PC) $(PC_UNINST) $(CLI_DOCS)
lib: $(STATIC) $(SHARED)

# Nothing is an intermediate to delete (the harness objects were, so every second make
# relinked every test); a recipe that fails leaves no half-written target behind.
.SECONDARY:
.DELETE_ON_ERROR:

# The flags stamps: $(BUILD)/flags.KIND holds what STAMP_KIND expands to and is rewritten
# only when that changes, so its time is the time of the last change and whatever was
# made with those flags depends on it. The recipe runs on every make and prints nothing.
STAMP_cc   = $(CC) $(CPPFLAGS) $(CFLAGS)
STAMP_ld   = $(CC) $(LDFLAGS) $(LIBS) $(CLI_LIBS) $(CMOCKA_LIBS)
STAMP_prog = $(CC)
STAMP_fuzz = $(CLANG) $(FUZZ_FLAGS) $(LIBS)
shell-quote = '$(subst ','\'',$(1))'
$(BUILD)/flags.%: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(call shell-quote,$(STAMP_$*)) | cmp -s - $@ || \
		printf '%s\n' $(call shell-quote,$(STAMP_$*)) >$@
FORCE:

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(TEST_LIB_OBJ:.o=.d)

$(BUILD)/%.o: %.c $(BUILD)/flags.cc
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(STATIC): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJ) lib/tacho.map $(BUILD)/flags.ld
	$(CC) -shared -Wl,-soname,libtacho.so.$(SOVERSION) -Wl,--version-script=lib/tacho.map \
		-Wl,--no-undefined $(LDFLAGS) -o $@ $(LIB_OBJ) $(LIBS)
	ln -sf libtacho.so.$(VERSION) $(BUILD)/libtacho.so.$(SOVERSION)
	ln -sf libtacho.so.$(SOVERSION) $(BUILD)/libtacho.so

# the page's files, which cli/serve/page.c embeds with the assembler's .incbin (the
# compiler's dependency list does not see them)
SERVE_FILES := cli/serve/page.html third_party/uplot/uPlot.iife.min.js third_party/uplot/uPlot.min.css
$(BUILD)/cli/serve/page.o: $(SERVE_FILES)

$(TACHO): $(CLI_OBJ) $(STATIC) $(BUILD)/flags.ld
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(STATIC) $(LIBS) $(CLI_LIBS)

# libdir and includedir in terms of ${prefix} when they lie under it (so that a tool that
# moves the prefix, pkg-config --define-prefix or a sysroot, moves them too), else as given
pc-dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
# The pages' date: the source's (dpkg-buildpackage's SOURCE_DATE_EPOCH, else the last
# commit's), so that the same source makes the same pages.
MAN_DATE := $(shell d=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null)}; \
	[ -n "$$d" ] && date -u -d "@$$d" +%F)
$(CLI_DOCS): $(TACHO)
	@rm -rf $(BUILD)/man $(BUILD)/completion
	@mkdir -p $(BUILD)/man $(BUILD)/completion
	@for p in $$($(TACHO) --dump-cli pages); do \
		$(TACHO) --dump-cli man $$p $(MAN_DATE) >$(BUILD)/man/$$p.1 || exit 1; \
	done
	$(TACHO) --dump-cli bash >$(BUILD)/completion/tacho
	$(TACHO) --dump-cli zsh >$(BUILD)/completion/_tacho
	@touch $@

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc-dir,$(LIBDIR))|' \
	-e 's|@INCDIR@|$(call pc-dir,$(INCDIR))|' \
	-e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES@|$(LIB_PC)|'
$(PC): tacho.pc.in include/tacho.h Makefile
	@mkdir -p $(@D)
	$(PC_SED) $< > $@
# the same library, found where this tree built it (an rpath, so that the program runs
# without LD_LIBRARY_PATH) and the source tree's headers
$(PC_UNINST): tacho.pc.in include/tacho.h Makefile
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(abspath .)|' -e 's|@LIBDIR@|$(abspath $(BUILD))|' \
		-e 's|@INCDIR@|$(abspath include)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@REQUIRES@|$(LIB_PC)|' \
		-e 's|^Libs: .*|Libs: -L$${libdir} -Wl,-rpath,$${libdir} -ltacho|' $< > $@

# --- tests -------------------------------------------------------------------------
# Each test is compiled once (with tests/lib on the include path) and linked where it
# runs: in $(BUILD), and again in the shared-library variant $(BUILD)/so.
#
# A test whose source includes a header of lib/ reaches functions libtacho.so does not
# export, so it links libtacho.a wherever it runs (today: every unit test but
# test-region-env, and the e2e tests test-cmd-doctor, test-cmd-list and test-cmd-stat;
# `make test-links` prints the lists as they are). The others use only include/: in
# $(BUILD)/so they link libtacho.so; in $(BUILD) they link libtacho.a, except
# tests/e2e/test-abi*.c, which check the shared library itself and always link it.
empty :=
space := $(empty) $(empty)
comma := ,
LIB_PARTS := $(patsubst lib/%/,%,$(sort $(dir $(LIB_SRC))))
INTERNAL_TEST_SRC := $(shell grep -lE '^.include "($(subst $(space),|,$(LIB_PARTS)))/' \
	$(TEST_SRC))
PUBLIC_TEST_SRC := $(filter-out $(INTERNAL_TEST_SRC),$(TEST_SRC))
ABI_TEST_SRC := $(filter tests/e2e/test-abi%,$(TEST_SRC))
E2E_TEST_SRC := $(filter tests/e2e/%,$(TEST_SRC))

TEST_BIN := $(patsubst %.c,$(BUILD)/%,$(TEST_SRC))
TEST_BIN_SHARED := $(patsubst %.c,$(BUILD)/%,$(ABI_TEST_SRC))
TEST_BIN_STATIC := $(filter-out $(TEST_BIN_SHARED),$(TEST_BIN))
# The variant holds the tests whose result can differ there: every e2e test that runs
# tacho, and every test that uses only the public API. The e2e tests that do neither
# read the build tree only (its objects, its install, the docs' programs built against
# libtacho.a) and would repeat themselves word for word: they stay out. Of the binaries
# that run there, scripts/run-tests.sh leaves out some long cases (so_leave_out; its
# comment and docs/testing.md say why).
SO := $(BUILD)/so
SO_TACHO := $(SO)/tacho
SO_SAME_SRC := tests/e2e/test-docs.c tests/e2e/test-install.c tests/e2e/test-layers.c \
	tests/e2e/test-sizes.c tests/e2e/test-commit-msg.c tests/e2e/test-cli-docs.c \
	tests/e2e/test-python.c
SO_TEST_SRC := $(filter-out $(SO_SAME_SRC),$(sort $(E2E_TEST_SRC) $(PUBLIC_TEST_SRC)))
SO_BIN := $(patsubst %.c,$(SO)/%,$(SO_TEST_SRC))
SO_BIN_SHARED := $(patsubst %.c,$(SO)/%,$(filter $(SO_TEST_SRC),$(PUBLIC_TEST_SRC)))
SO_BIN_STATIC := $(filter-out $(SO_BIN_SHARED),$(SO_BIN))

# Helper programs the e2e tests run (known event counts): static and not PIE, so that
# their start-up is the same on every run; never sanitized (ASan cannot be static).
# Those named lib-*.c link libtacho.a instead, built with this tree's flags (a sanitized
# tree's run under valgrind cannot: their tests skip there).
PROG_BIN := $(patsubst %.c,$(BUILD)/%,$(sort $(wildcard tests/progs/*.c)))
PROG_LIB_BIN := $(filter $(BUILD)/tests/progs/lib-%,$(PROG_BIN))

$(BUILD)/tests/%.o: tests/%.c $(BUILD)/flags.cc
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) -MMD -MP -c -o $@ $<

TEST_LINK_DEPS := $(TEST_LIB_OBJ) $(BUILD)/flags.ld
# the one test that asks libpfm4 itself what it encodes links it; the library loads it
# (lib/events/pfm.c) and finds this copy
TEST_PFM :=
$(BUILD)/tests/unit/test-events-pfm $(SO)/tests/unit/test-events-pfm: TEST_PFM := -lpfm
TEST_SYS_LIBS := $(CMOCKA_LIBS) -lm -lpthread -ldl
$(TEST_BIN_STATIC): $(BUILD)/%: $(BUILD)/%.o $(STATIC) $(TEST_LINK_DEPS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJ) $(STATIC) $(LIBS) $(TEST_PFM) $(CMOCKA_LIBS)
$(TEST_BIN_SHARED): $(BUILD)/%: $(BUILD)/%.o $(SHARED) $(TEST_LINK_DEPS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJ) $(SHARED) -Wl,-rpath,'$$ORIGIN/../..' \
		$(TEST_PFM) $(TEST_SYS_LIBS)
$(SO_BIN_STATIC): $(SO)/%: $(BUILD)/%.o $(STATIC) $(TEST_LINK_DEPS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJ) $(STATIC) $(LIBS) $(TEST_PFM) $(CMOCKA_LIBS)
$(SO_BIN_SHARED): $(SO)/%: $(BUILD)/%.o $(SHARED) $(TEST_LINK_DEPS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_LIB_OBJ) $(SHARED) -Wl,-rpath,'$$ORIGIN/../../..' \
		$(TEST_PFM) $(TEST_SYS_LIBS)

# The variant's tacho calls the library through libtacho.so; the internal helpers the
# command line may also use (docs/architecture.md: strings, numbers, tables) come from
# libtacho.a. That is sound only while no such helper shares its file with an exported
# function or with state: the archive member would bring a second copy of them (a second
# tacho_set_log, whose callback libtacho.so would never see). So the link fails, naming
# them, when the binary defines anything libtacho.so exports.
$(SO_TACHO): $(CLI_OBJ) $(SHARED) $(STATIC) $(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(SHARED) $(STATIC) -Wl,-rpath,'$$ORIGIN/..' \
		$(LIBS) $(CLI_LIBS)
	@nm -D --defined-only $(SHARED) | awk '{ sub(/@.*/, "", $$3); print $$3 }' | sort -u \
		>$@.exported
	@twice=$$(nm -g --defined-only $@ | awk '{ print $$3 }' | sort -u | comm -12 $@.exported -); \
	rm -f $@.exported; \
	if [ -n "$$twice" ]; then \
		echo "$@: defines what libtacho.so exports (taken from libtacho.a with an" \
			"internal function the command line calls; move that function out of" \
			"their file):" $$twice >&2; \
		rm -f $@; exit 1; \
	fi

$(BUILD)/tests/progs/%: tests/progs/%.c $(BUILD)/flags.prog
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -static -no-pie -o $@ $<
# inline-*: -O2, as released code is, for the inline frames of report (the
# always_inline function in them is inlined at any level; -O2 is what users profile)
$(BUILD)/tests/progs/inline-%: tests/progs/inline-%.c $(BUILD)/flags.prog
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -static -no-pie -o $@ $<
# pie-*: dynamic and position-independent, as most programs are (their mappings at
# random addresses, libraries' code at file offsets of its own)
$(BUILD)/tests/progs/pie-%: tests/progs/pie-%.c $(BUILD)/flags.prog
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -fPIE -pie -o $@ $<
$(PROG_LIB_BIN): $(BUILD)/tests/progs/%: tests/progs/%.c $(STATIC) $(BUILD)/flags.cc \
		$(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LIBS)

# A program built with -DTACHO_DISABLE links no library at all: the regions and marks
# it calls must compile to nothing (tests/e2e/test-examples.c checks its symbols).
$(BUILD)/tests/progs/off-%: tests/progs/off-%.c $(wildcard include/tacho/*.h) include/tacho.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O0 -g $(WARNINGS) -DTACHO_DISABLE -Iinclude -o $@ $<

# Helper programs that mark (tacho trace's tests) link the library of their build.
$(BUILD)/tests/progs/trace-%: tests/progs/trace-%.c $(STATIC) $(BUILD)/flags.cc $(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LDFLAGS) $(LIBS)

$(BUILD)/examples/%: examples/%.c $(STATIC) $(BUILD)/flags.cc $(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -o $@ $< $(STATIC) $(LDFLAGS) $(LIBS)
$(BUILD)/bench/%: bench/%.c $(STATIC) $(BUILD)/flags.cc $(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -o $@ $< $(STATIC) $(LDFLAGS) $(LIBS) \
		$(shell pkg-config --libs papi 2>/dev/null)
-include $(EX_BIN:=.d) $(BENCH_BIN:=.d)

# The e2e tests run tacho, the helper programs and the examples.
$(filter $(BUILD)/tests/e2e/%,$(TEST_BIN)): $(TACHO) $(PROG_BIN) $(EX_BIN)
$(filter $(SO)/tests/e2e/%,$(SO_BIN)): $(SO_TACHO)

tests: all $(TEST_BIN) $(EX_BIN) $(PROG_BIN)
TSAN_TEST_SRC := tests/unit/test-region-race.c tests/unit/test-trace-wake.c \
	tests/unit/test-trace-full-wait.c
tests-tsan: $(patsubst %.c,$(BUILD)/%,$(TSAN_TEST_SRC))
tests-so: tests $(SO_TACHO) $(SO_BIN)
examples: $(EX_BIN)
benches: $(BENCH_BIN)

test-links:
	@echo "include a lib/ header, link libtacho.a everywhere:" $(INTERNAL_TEST_SRC)
	@echo "in $(SO), linked with libtacho.so:" $(filter $(SO_TEST_SRC),$(PUBLIC_TEST_SRC))
	@echo "in $(SO), linked with libtacho.a:" $(filter $(SO_TEST_SRC),$(INTERNAL_TEST_SRC))
	@echo "not in $(SO) (neither run tacho nor call the library):" $(SO_SAME_SRC)

# Fuzz targets: clang's libFuzzer with ASan and UBSan, linked with the library compiled
# once by clang into its own archive (the gcc objects cannot carry fuzzer coverage).
FUZZ_FLAGS := -std=gnu11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -Iinclude -Ilib \
	-D_GNU_SOURCE $(DW_CFLAGS) $(TEP_CFLAGS)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/fuzzobj/%.o)
$(BUILD)/fuzzobj/%.o: %.c $(BUILD)/flags.fuzz
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/libtacho-fuzz.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^
$(BUILD)/fuzz/%: fuzz/%.c $(BUILD)/libtacho-fuzz.a $(BUILD)/flags.fuzz
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< $(BUILD)/libtacho-fuzz.a $(FUZZ_LIBS)
-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_BIN:=.d)
fuzz: $(FUZZ_BIN)

# Long fuzzing, not in the test command: each target in turn, in one process from its
# corpus, to FUZZ_LONG_RUNS executions (10 M) or FUZZ_LONG_SECONDS (600), whichever
# first (scripts/fuzz-long.sh; FUZZ_TARGETS=x86len,elf chooses some). docs/testing.md
# has the figures.
FUZZ_LONG_SECONDS ?= 600
FUZZ_TARGETS ?=
fuzz-long:
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/fuzz-build fuzz
	@scripts/fuzz-long.sh build/fuzz-build/fuzz $(FUZZ_LONG_SECONDS) $(subst $(comma),$(space),$(FUZZ_TARGETS))

check: tests tests-so
	@scripts/run-tests.sh $(BUILD) $(SO)

# The README's test command. Everything from a clean clone: set-up, the four trees built
# with warnings as errors by one make (one sub-make per tree, sharing the jobserver, so
# that their compiles overlap), then the suite of every tree and the fuzz targets as
# parallel jobs (scripts/run-tests.sh), ending with the summary line.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory -j$(JOBS) --output-sync=target test-trees
	@scripts/run-tests.sh build build/so build/asan build/tsan --fuzz build/fuzz-build/fuzz

test-trees: test-tree-release test-tree-asan test-tree-tsan test-tree-fuzz
test-tree-release:
	@$(MAKE) --no-print-directory WERROR=1 BUILD=build tests tests-so
test-tree-asan:
	@$(MAKE) --no-print-directory WERROR=1 BUILD=build/asan SAN=1 tests
test-tree-tsan:
	@$(MAKE) --no-print-directory WERROR=1 BUILD=build/tsan SAN=thread tests-tsan
test-tree-fuzz:
	@$(MAKE) --no-print-directory BUILD=build/fuzz-build fuzz

# The README's first command: what tacho is for, on a bundled workload.
demo:
	@scripts/deps.sh build
	$(MAKE) --no-print-directory -j$(JOBS) all examples
	@scripts/demo.sh $(BUILD)

bench:
	@scripts/deps.sh bench
	$(MAKE) --no-print-directory all benches examples
	@scripts/bench.sh $(BUILD)

deps:
	@scripts/deps.sh test

deb:
	@scripts/deps.sh test
	@scripts/check-deb.sh $(BUILD)/deb

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PCDIR)
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libtacho.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtacho.so.$(SOVERSION)
	ln -sf libtacho.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtacho.so
	install -d $(DESTDIR)$(INCDIR)/tacho
	install -m 644 include/tacho.h $(DESTDIR)$(INCDIR)/
	install -m 644 include/tacho/*.h $(DESTDIR)$(INCDIR)/tacho/
	install -m 755 $(TACHO) $(DESTDIR)$(BINDIR)/
	$(PC_SED) tacho.pc.in > $(DESTDIR)$(PCDIR)/tacho.pc   # the prefix of this install
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(BUILD)/completion/tacho $(DESTDIR)$(BASHCOMPDIR)/tacho
	install -m 644 $(BUILD)/completion/_tacho $(DESTDIR)$(ZSHCOMPDIR)/_tacho
	install -d $(DESTDIR)$(PYTHONDIR)/tacho
	install -m 644 python/tacho/__init__.py $(DESTDIR)$(PYTHONDIR)/tacho/

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/tacho
	rm -f $(DESTDIR)$(LIBDIR)/libtacho.a $(DESTDIR)$(LIBDIR)/libtacho.so* \
		$(DESTDIR)$(INCDIR)/tacho.h $(DESTDIR)$(BINDIR)/tacho $(DESTDIR)$(PCDIR)/tacho.pc \
		$(DESTDIR)$(MANDIR)/man1/tacho.1 $(DESTDIR)$(MANDIR)/man1/tacho-*.1 \
		$(DESTDIR)$(BASHCOMPDIR)/tacho $(DESTDIR)$(ZSHCOMPDIR)/_tacho
	rm -rf $(DESTDIR)$(PYTHONDIR)/tacho

clean:
	rm -rf build build-*
