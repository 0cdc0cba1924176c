# sift build. `make` builds build/bin and build/lib; `make check` runs the tests;
# `make SAN=1 check` runs them under ASan+UBSan in build-san/.
CC      := clang
SAN     ?= 0
ifeq ($(SAN),1)
BUILD   ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD   ?= build
SANFLAGS :=
endif
LLVM_CONFIG ?= llvm-config-14
WERROR  ?= -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra $(WERROR) -fPIC -Iinclude -Isrc $(SANFLAGS)
LDFLAGS += $(SANFLAGS)

COV_SRC    := $(wildcard src/rt/cov/*.c)
RT_SRC     := $(wildcard src/rt/*.c)
INTERPOSE_SRC := $(wildcard src/rt/interpose/*.c)
ENGINE_SRC := $(wildcard src/engine/*.c src/engine/*/*.c)
INSTR_SRC  := $(wildcard src/cc/instrument*.c) src/cc/sift_instrument.c
CC_SRC     := $(filter-out $(INSTR_SRC),$(wildcard src/cc/*.c))
CLI_SRC    := $(filter-out src/cli/gen_man.c,$(wildcard src/cli/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBS := $(BUILD)/lib/libsift-cov.a $(BUILD)/lib/libsift-rt.a $(BUILD)/lib/libsift-fuzzer.a \
        $(BUILD)/lib/libsift-interpose.a
BINS := $(BUILD)/bin/sift-cc $(BUILD)/bin/sift-c++ $(BUILD)/bin/sift-instrument $(BUILD)/bin/sift

TEST_SRC  := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_SUPPORT := $(wildcard tests/support/*.c)
# Tests and their support find the build and the sources they drive by these paths.
TEST_DEFS := -Itests -DSIFT_BUILD_DIR='"$(abspath $(BUILD))"' -DSIFT_SOURCE_DIR='"$(abspath .)"'

.PHONY: all check test-all demo bench clean format
all: $(LIBS) $(BINS)

# The dependency files name each object both ways, under the tree and absolute: a make run with
# BUILD absolute (test_install's) would otherwise write rules that a later run with BUILD
# relative never matches, and leave objects stale after a header changes.
DEP_TARGETS = -MT $(abspath $@) -MT $(patsubst $(CURDIR)/%,%,$(abspath $@))

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP $(DEP_TARGETS) -c $< -o $@

$(BUILD)/lib/libsift-cov.a: $(call obj,$(COV_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/lib/libsift-rt.a: $(call obj,$(COV_SRC) $(RT_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/lib/libsift-fuzzer.a: $(call obj,$(COV_SRC) $(RT_SRC) $(ENGINE_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Replacements of libc's comparisons, kept apart: only builds without ASan, MSan or TSan may
# link them. -fno-builtin keeps their loops from compiling into calls to themselves.
$(call obj,$(INTERPOSE_SRC)): CFLAGS += -fno-builtin
$(BUILD)/lib/libsift-interpose.a: $(call obj,$(INTERPOSE_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# test_interpose checks the interposed functions where they may be linked; under ASan it checks
# the interceptors' hooks instead, the runtime's, which replace ASan's weak no-ops only when
# their object is linked whole (an archive member is not pulled in to override a weak symbol).
ifneq ($(SAN),1)
TEST_LINK_test_interpose := $(BUILD)/lib/libsift-interpose.a
else
TEST_LINK_test_interpose := $(call obj,src/rt/cmp.c)
endif

# test_sancov loads instrumented shared objects, which resolve the callbacks against the test:
# it exports them, and holds sift's rather than the sanitizer runtime's weak no-ops.
TEST_LINK_test_sancov := -rdynamic -Wl,--whole-archive $(BUILD)/lib/libsift-rt.a \
                         -Wl,--no-whole-archive

$(BUILD)/bin/sift-cc: $(call obj,$(CC_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

# The value instrumenter works on LLVM bitcode through the LLVM-C API. sift-cc runs it once per
# source file: linked with LLVM's static libraries it starts without relocating libLLVM's
# symbols, 0.05 s of each run (bench/results/build-2026-12-03-static-llvm/NOTES.md).
LLVM_COMPONENTS := core bitreader bitwriter analysis target
$(call obj,$(INSTR_SRC)): CFLAGS += $(shell $(LLVM_CONFIG) --cflags)
$(BUILD)/bin/sift-instrument: $(call obj,$(INSTR_SRC) src/cc/text.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(shell $(LLVM_CONFIG) --ldflags --link-static --libs $(LLVM_COMPONENTS)) \
	    -Wl,--as-needed $(shell $(LLVM_CONFIG) --link-static --system-libs) -lstdc++ -o $@

# sift show DIR: a campaign's output folder summed up and plotted (docs/watching.md).
$(BUILD)/bin/sift: $(call obj,$(CLI_SRC) src/engine/base/humanize.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -lm -o $@

# test_show checks the output folder's parsers and the plot's ticks directly too.
TEST_LINK_test_show := $(call obj,src/cli/outread.c src/cli/svg.c)
# test_view runs harnesses under a pseudo-terminal (forkpty).
TEST_LINK_test_view := -lutil

$(BUILD)/bin/sift-c++: $(BUILD)/bin/sift-cc
	ln -sf sift-cc $@

$(call obj,$(TEST_SUPPORT)): CFLAGS += $(TEST_DEFS)
$(BUILD)/tests/%: tests/%.c $(call obj,$(TEST_SUPPORT)) $(LIBS) $(BINS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TEST_DEFS) $< $(call obj,$(TEST_SUPPORT)) \
	    $(TEST_LINK_$*) $(BUILD)/lib/libsift-fuzzer.a $(LDFLAGS) \
	    -lcmocka -l:libmd.a -ldl -lpthread -lm -o $@

check: all $(TEST_BINS)
	tests/run $(BUILD)/tests

# The README's test command: the static analysis (make lint), the suite as built, then again
# under ASan+UBSan.
test-all:
	$(MAKE) lint
	$(MAKE) check
	$(MAKE) SAN=1 check

demo: all
	examples/demo $(BUILD)

# The per-execution pass against reference loops (bench/README.md); e.g. BENCH_ARGS="7 -i avx2".
.PHONY: bench-novelty
bench-novelty: $(BUILD)/lib/libsift-cov.a
	BUILD=$(BUILD) bench/novelty $(BENCH_ARGS)

# The man page, generated from the flag table so that it lists what -help=1 prints.
MAN := $(BUILD)/share/man/man1/sift.1
all: $(MAN)

$(BUILD)/tools/gen_man: $(call obj,src/cli/gen_man.c src/engine/base/options.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

$(MAN): $(BUILD)/tools/gen_man
	@mkdir -p $(dir $@)
	$< >$@.tmp && mv $@.tmp $@

# `make install [PREFIX=/usr/local] [DESTDIR=]` (docs/install.md). The layout is the one sift-cc
# searches: lib/ and include/ next to its bin/.
PREFIX ?= /usr/local
SIFT_VERSION = $(shell sed -n 's/^#define SIFT_VERSION "\(.*\)"/\1/p' include/sift/version.h)
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
INSTALL_BINS = $(filter-out %/sift-c++,$(BINS))
INSTALL_HEADERS = $(wildcard include/sift/*.h)

.PHONY: install uninstall
install: all
	install -d $(INSTALL_ROOT)/bin $(INSTALL_ROOT)/lib/pkgconfig $(INSTALL_ROOT)/include/sift \
	    $(INSTALL_ROOT)/share/man/man1
	install -m 755 $(INSTALL_BINS) $(INSTALL_ROOT)/bin/
	ln -sf sift-cc $(INSTALL_ROOT)/bin/sift-c++
	install -m 644 $(LIBS) $(INSTALL_ROOT)/lib/
	install -m 644 $(INSTALL_HEADERS) $(INSTALL_ROOT)/include/sift/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(SIFT_VERSION)|' src/sift.pc.in \
	    >$(INSTALL_ROOT)/lib/pkgconfig/sift.pc
	install -m 644 $(MAN) $(INSTALL_ROOT)/share/man/man1/

uninstall:
	rm -f $(addprefix $(INSTALL_ROOT)/bin/,$(notdir $(INSTALL_BINS)) sift-c++) \
	    $(addprefix $(INSTALL_ROOT)/lib/,$(notdir $(LIBS))) \
	    $(addprefix $(INSTALL_ROOT)/include/sift/,$(notdir $(INSTALL_HEADERS))) \
	    $(INSTALL_ROOT)/lib/pkgconfig/sift.pc $(INSTALL_ROOT)/share/man/man1/$(notdir $(MAN))
	-rmdir $(INSTALL_ROOT)/include/sift

clean:
	rm -rf build build-san

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

include bindings/erlang/erlang.mk
include fuzz/selffuzz.mk

# Static analysis (docs/lint.md): clang-tidy, with the checks in .clang-tidy, and cppcheck over
# sift's own C sources, and scripts/check-layers over its includes and link graph; any finding
# fails. One clang-tidy job per file, LINT_JOBS at a time.
CLANG_TIDY ?= clang-tidy
CPPCHECK   ?= cppcheck
LINT_JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
LINT_SRC   := $(sort $(wildcard src/*/*.c src/*/*/*.c fuzz/*.c examples/*.c bench/bugs/*.c tests/*.c \
                tests/support/*.c tests/fixtures/*.c))
# The lua harness is built against the lua source bench/bugs/run fetches, never here.
LINT_SRC   := $(filter-out bench/bugs/lua_fuzzer.c,$(LINT_SRC))
# The NIF needs erl_nif.h, as its build does.
ifneq ($(shell command -v $(ERLC) 2>/dev/null),)
LINT_SRC   += $(wildcard $(ERL_DIR)/c_src/*.c)
endif
LINT_TIDY  := $(addprefix lint-tidy/,$(LINT_SRC))
# Each file is read with the flags it is built with. The tests' analysis also learns that
# cmocka's fail() does not return (tests/support/analyzer.h).
LINT_FLAGS = $(CFLAGS)
lint-tidy/src/cc/instrument% lint-tidy/src/cc/sift_instrument%: LINT_FLAGS += $(shell $(LLVM_CONFIG) --cflags)
lint-tidy/src/rt/interpose/%: LINT_FLAGS += -fno-builtin
lint-tidy/tests/%: LINT_FLAGS += $(TEST_DEFS) -include tests/support/analyzer.h
lint-tidy/$(ERL_DIR)/%: LINT_FLAGS += -I$(ERL_INCLUDE)

# Under make -jN the jobs share N; else LINT_JOBS.
.PHONY: lint lint-run lint-cppcheck lint-layers $(LINT_TIDY)
lint:
	@$(MAKE) --no-print-directory --keep-going \
	    $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(LINT_JOBS)) lint-run
	@echo "lint: clang-tidy, cppcheck and check-layers found nothing in $(words $(LINT_SRC)) files"
lint-run: $(LINT_TIDY) lint-cppcheck lint-layers

# Includes that point up a layer, and file loops in the link graph of the objects as built. The
# NIF is built as one shared object: its files' objects are compiled for the check alone.
ERL_LAYER_OBJ :=
ifneq ($(shell command -v $(ERLC) 2>/dev/null),)
ERL_LAYER_OBJ := $(call obj,$(ERL_NIF_SRC))
$(ERL_LAYER_OBJ): CFLAGS += -I$(ERL_INCLUDE)
endif
lint-layers: all $(ERL_LAYER_OBJ)
	@scripts/check-layers . $(BUILD)/obj

# A file's findings come out together; clang-tidy's count of warnings it did not show does not.
$(LINT_TIDY): lint-tidy/%: %
	@out=$$($(CLANG_TIDY) --quiet $< -- $(LINT_FLAGS) 2>&1); rc=$$?; \
	 [ -z "$$out" ] || printf '%s\n' "$$out" | grep -v '^[0-9]* warnings\? generated\.$$'; \
	 exit $$rc

lint-cppcheck:
	@$(CPPCHECK) --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr --std=c11 -Iinclude -Isrc -Itests $(LINT_SRC)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
