# sift fuzzing its own parsers (docs/selffuzz.md), included by the Makefile. Each fuzz/NAME.c is
# a harness, built into $(BUILD)/fuzz/bin/NAME with an instrumented copy of the code it tests
# (fuzz/link). `make selffuzz` runs each for SELFFUZZ_SECONDS from fuzz/corpus/NAME/ and fails
# on a finding; tests/test_selffuzz.c does the same within make check.
SELFFUZZ_SECONDS ?= 20
SELFFUZZ_DIR  := $(BUILD)/fuzz
SELFFUZZ_BINS := $(patsubst fuzz/%.c,$(SELFFUZZ_DIR)/bin/%,$(wildcard fuzz/*.c))
SELFFUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra $(WERROR) -Iinclude -Isrc \
                   -fsanitize=address,undefined -fno-sanitize-recover=all
selffuzz_obj = $(patsubst %.c,$(SELFFUZZ_DIR)/obj/%.o,$(1))

# The code each harness tests.
$(SELFFUZZ_DIR)/bin/flags: $(call selffuzz_obj,src/engine/base/options.c)
$(SELFFUZZ_DIR)/bin/dict: $(call selffuzz_obj,src/engine/core/dict.c)
$(SELFFUZZ_DIR)/bin/export: $(call selffuzz_obj,$(COV_SRC))
$(SELFFUZZ_DIR)/bin/names: $(call selffuzz_obj,src/engine/campaign/outdir.c)

$(SELFFUZZ_DIR)/obj/%.o: %.c $(BINS)
	@mkdir -p $(dir $@)
	$(BUILD)/bin/sift-cc $(SELFFUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(SELFFUZZ_DIR)/bin/%: $(SELFFUZZ_DIR)/obj/fuzz/%.o fuzz/link $(LIBS) $(BINS)
	@mkdir -p $(dir $@)
	fuzz/link $@ $(BUILD)/bin/sift-cc $(SELFFUZZ_CFLAGS) -fsanitize=fuzzer -- $< \
	    $(filter $(SELFFUZZ_DIR)/obj/src/%,$^)

# Kept, so that the harnesses relink only when something changed.
.SECONDARY: $(patsubst fuzz/%.c,$(SELFFUZZ_DIR)/obj/fuzz/%.o,$(wildcard fuzz/*.c))

$(BUILD)/tests/test_selffuzz: $(SELFFUZZ_BINS)

.PHONY: selffuzz
selffuzz: $(SELFFUZZ_BINS)
	fuzz/run $(SELFFUZZ_DIR)/out $(SELFFUZZ_SECONDS) $^

-include $(shell find $(SELFFUZZ_DIR)/obj -name '*.d' 2>/dev/null)
