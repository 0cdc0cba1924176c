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
ENGINE_SRC := $(wildcard src/engine/*.c)
CC_SRC     := $(wildcard src/cc/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBS := $(BUILD)/lib/libsift-cov.a $(BUILD)/lib/libsift-rt.a $(BUILD)/lib/libsift-fuzzer.a \
        $(BUILD)/lib/libsift-interpose.a
BINS := $(BUILD)/bin/sift-cc $(BUILD)/bin/sift-c++

TEST_SRC  := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_SUPPORT := $(wildcard tests/support/*.c)

.PHONY: all check test-all demo bench clean format
all: $(LIBS) $(BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

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

# test_cmp checks the interposed functions where they may be linked; under ASan it checks the
# interceptors' hooks instead.
ifneq ($(SAN),1)
TEST_LINK_test_cmp := $(BUILD)/lib/libsift-interpose.a
endif

# test_sancov loads instrumented shared objects, which resolve the callbacks against the test:
# it exports them, and holds sift's rather than the sanitizer runtime's weak no-ops.
TEST_LINK_test_sancov := -rdynamic -Wl,--whole-archive $(BUILD)/lib/libsift-rt.a \
                         -Wl,--no-whole-archive

$(BUILD)/bin/sift-cc: $(call obj,$(CC_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

$(BUILD)/bin/sift-c++: $(BUILD)/bin/sift-cc
	ln -sf sift-cc $@

$(BUILD)/tests/%: tests/%.c $(call obj,$(TEST_SUPPORT)) $(LIBS) $(BINS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -DSIFT_BUILD_DIR='"$(abspath $(BUILD))"' \
	    -DSIFT_SOURCE_DIR='"$(abspath .)"' $< $(call obj,$(TEST_SUPPORT)) \
	    $(TEST_LINK_$*) $(BUILD)/lib/libsift-fuzzer.a $(LDFLAGS) \
	    -lcmocka -l:libmd.a -ldl -lpthread -lm -o $@

check: all $(TEST_BINS)
	tests/run $(BUILD)/tests

# The README's test command: the suite as built, then again under ASan+UBSan.
test-all:
	$(MAKE) check
	$(MAKE) SAN=1 check

demo: all
	examples/demo $(BUILD)

# The per-execution pass against reference loops (bench/README.md); e.g. BENCH_ARGS="7 -i avx2".
.PHONY: bench-novelty
bench-novelty: $(BUILD)/lib/libsift-cov.a
	BUILD=$(BUILD) bench/novelty $(BENCH_ARGS)

clean:
	rm -rf build build-san

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

include bindings/erlang/erlang.mk

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
