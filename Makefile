# Makefile - the one, non-recursive build of libtacho, the tacho binary, tests,
# examples, benchmarks and fuzz targets.
#
#   make                  libtacho.a, libtacho.so, tacho, tacho.pc in $(BUILD) (default build/)
#   make demo             install what is missing, build, run tacho on a bundled workload
#   make test             install what is missing, then the whole suite: warnings as errors,
#                         release build, the same under ASan+UBSan, fuzz targets briefly
#   make check            run the suite in $(BUILD) only (no set-up)
#   make install PREFIX=/usr/local DESTDIR=
#   make SAN=1            build with AddressSanitizer and UndefinedBehaviorSanitizer
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

DW_CFLAGS := $(shell pkg-config --cflags libdw 2>/dev/null)
DW_LIBS   := $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# ncurses is for the live monitor to come: nothing links it until a command uses it (then
# that command's objects add $(CURSES_LIBS) to CLI_LIBS, the libraries of tacho alone).
CURSES_LIBS = $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw)
CLI_LIBS  :=

override CPPFLAGS += -Iinclude -Ilib -D_GNU_SOURCE
override CFLAGS   += -std=gnu11 $(OPT) $(WARNINGS) $(SANFLAGS) -fPIC -fvisibility=hidden \
	$(DW_CFLAGS)
override LDFLAGS  += $(SANFLAGS)
LIBS     := -lpfm $(DW_LIBS) -lm -lpthread -ldl

LIB_SRC   := $(sort $(wildcard lib/*/*.c))
CLI_SRC   := $(sort $(wildcard cli/*.c))
TEST_SRC  := $(sort $(wildcard tests/unit/*.c tests/e2e/*.c))
TEST_LIB_SRC := $(sort $(wildcard tests/lib/*.c))
EX_SRC    := $(sort $(wildcard examples/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))
FUZZ_SRC  := $(sort $(wildcard fuzz/fuzz-*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_LIB_OBJ := $(TEST_LIB_SRC:%.c=$(BUILD)/%.o)
TEST_BIN  := $(patsubst %.c,$(BUILD)/%,$(TEST_SRC))
EX_BIN    := $(patsubst %.c,$(BUILD)/%,$(EX_SRC))
BENCH_BIN := $(patsubst %.c,$(BUILD)/%,$(BENCH_SRC))
FUZZ_BIN  := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

STATIC := $(BUILD)/libtacho.a
SHARED := $(BUILD)/libtacho.so.$(VERSION)
TACHO  := $(BUILD)/tacho
PC     := $(BUILD)/tacho.pc

.PHONY: all lib tests examples benches fuzz check test demo install uninstall clean deps bench \
	FORCE
all: lib $(TACHO) $(PC)
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

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_LIB_OBJ:.o=.d)

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

$(TACHO): $(CLI_OBJ) $(STATIC) $(BUILD)/flags.ld
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(STATIC) $(LIBS) $(CLI_LIBS)

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	-e 's|@VERSION@|$(VERSION)|'
$(PC): tacho.pc.in include/tacho.h
	@mkdir -p $(@D)
	$(PC_SED) $< > $@

# Tests link the static library (they may reach internal functions through lib/ headers);
# tests/e2e/test-abi*.c link the shared one and see only what the version script exports.
$(BUILD)/tests/unit/%: tests/unit/%.c $(STATIC) $(TEST_LIB_OBJ) $(BUILD)/flags.cc \
		$(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) -MMD -MP -o $@ $< $(TEST_LIB_OBJ) $(STATIC) $(LDFLAGS) \
		$(LIBS) $(CMOCKA_LIBS)
$(BUILD)/tests/e2e/test-abi%: tests/e2e/test-abi%.c $(SHARED) $(TEST_LIB_OBJ) $(BUILD)/flags.cc \
		$(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) -MMD -MP -o $@ $< $(TEST_LIB_OBJ) -L$(BUILD) -ltacho \
		-Wl,-rpath,'$$ORIGIN/../..' $(LDFLAGS) $(CMOCKA_LIBS)
$(BUILD)/tests/e2e/%: tests/e2e/%.c $(STATIC) $(TEST_LIB_OBJ) $(TACHO) $(BUILD)/flags.cc \
		$(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) -MMD -MP -o $@ $< $(TEST_LIB_OBJ) $(STATIC) $(LDFLAGS) \
		$(LIBS) $(CMOCKA_LIBS)
-include $(TEST_BIN:=.d)

$(BUILD)/examples/%: examples/%.c $(STATIC) $(BUILD)/flags.cc $(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -o $@ $< $(STATIC) $(LDFLAGS) $(LIBS)
$(BUILD)/bench/%: bench/%.c $(STATIC) $(BUILD)/flags.cc $(BUILD)/flags.ld
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -o $@ $< $(STATIC) $(LDFLAGS) $(LIBS) \
		$(shell pkg-config --libs papi 2>/dev/null)
-include $(EX_BIN:=.d) $(BENCH_BIN:=.d)

# Helper programs the e2e tests run (known event counts): static and not PIE, so that
# their start-up is the same on every run; never sanitized (ASan cannot be static).
PROG_BIN := $(patsubst %.c,$(BUILD)/%,$(sort $(wildcard tests/progs/*.c)))
$(BUILD)/tests/progs/%: tests/progs/%.c $(BUILD)/flags.prog
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -static -no-pie -o $@ $<

tests: all $(TEST_BIN) $(EX_BIN) $(PROG_BIN)
examples: $(EX_BIN)
benches: $(BENCH_BIN)

# Fuzz targets: clang's libFuzzer with ASan and UBSan, linked with the library compiled
# once by clang into its own archive (the gcc objects cannot carry fuzzer coverage).
FUZZ_FLAGS := -std=gnu11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -Iinclude -Ilib \
	-D_GNU_SOURCE $(DW_CFLAGS)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/fuzzobj/%.o)
$(BUILD)/fuzzobj/%.o: %.c $(BUILD)/flags.fuzz
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/libtacho-fuzz.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^
$(BUILD)/fuzz/%: fuzz/%.c $(BUILD)/libtacho-fuzz.a $(BUILD)/flags.fuzz
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< $(BUILD)/libtacho-fuzz.a $(LIBS)
-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_BIN:=.d)
fuzz: $(FUZZ_BIN)

check: tests
	@scripts/run-tests.sh $(BUILD)

# The README's test command. Everything from a clean clone: set-up, warnings as errors,
# the suite on the release build, again under ASan+UBSan, the fuzz targets, a summary.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test:
	@scripts/deps.sh test
	$(MAKE) --no-print-directory -j$(JOBS) WERROR=1 BUILD=build tests
	$(MAKE) --no-print-directory -j$(JOBS) WERROR=1 BUILD=build/asan SAN=1 tests
	$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/fuzz-build fuzz
	@scripts/run-tests.sh build build/asan --fuzz build/fuzz-build/fuzz

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

uninstall:
	rm -rf $(DESTDIR)$(INCDIR)/tacho
	rm -f $(DESTDIR)$(LIBDIR)/libtacho.a $(DESTDIR)$(LIBDIR)/libtacho.so* \
		$(DESTDIR)$(INCDIR)/tacho.h $(DESTDIR)$(BINDIR)/tacho $(DESTDIR)$(PCDIR)/tacho.pc

clean:
	rm -rf build build-*
