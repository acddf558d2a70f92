# tests/fuzz/fuzz.mk - the libFuzzer harnesses (included by the Makefile;
# docs/fuzzing.md).
#
#   make fuzz         build, then fuzz each harness for FUZZ_SECONDS (30)
#                     one after the other, at nice 10; fails if any crashed
#   make fuzz-replay  replay every committed corpus under ASan+UBSan (make asan
#                     runs it)
#   make check replays the corpora too, with the harnesses built by the
#   normal compiler against build/libmemtop.a (fuzz-plain/): seconds to
#   build, so every check runs them.
#
# Every harness tests/fuzz/fuzz_T.c has its seed corpus in tests/fuzz/T/.
# The sources are compiled once, with clang and ASan+UBSan plus libFuzzer's
# coverage, into $(OUTPUT)/fuzz/ (never into $(OUTPUT)/obj), and linked
# twice: $(OUTPUT)/fuzz/fuzz_T with libFuzzer, $(OUTPUT)/fuzz/replay_T with
# the standalone driver (tests/fuzz/driver.c) that make check runs over the
# corpus. Every library source is built but the BPF loader (it needs the
# skeleton, and nothing fuzzed reaches it); a harness links only what its
# module pulls in from the archive.
#
# A fuzz run grows $(OUTPUT)/fuzz/corpus/T (seeded from tests/fuzz/T) and
# writes crashing inputs to $(OUTPUT)/fuzz/crashes/; fix the bug, then add
# the input to tests/fuzz/T/ as its regression test.

FUZZ_SECONDS ?= 30
FUZZ_CC      ?= clang
FUZZ_OUT     := $(OUTPUT)/fuzz
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SRCS    := $(filter-out src/probe/bpf_loader.c,$(LIB_SRCS))
FUZZ_OBJS    := $(patsubst src/%.c,$(FUZZ_OUT)/obj/%.o,$(FUZZ_SRCS))
FUZZ_SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
FUZZ_CFLAGS   = $(ALL_CFLAGS) $(FUZZ_SAN)
FUZZ_BINS    := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_TARGETS))
FUZZ_REPLAYS := $(patsubst %,$(FUZZ_OUT)/replay_%,$(FUZZ_TARGETS))
# ASan's defaults plus: stop on the first report, with a stack.
FUZZ_ENV     := ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1

# The same harnesses and driver, built as memtop itself is, for make check.
FUZZ_PLAIN   := $(OUTPUT)/fuzz-plain
FUZZ_PLAIN_REPLAYS := $(patsubst %,$(FUZZ_PLAIN)/replay_%,$(FUZZ_TARGETS))

$(FUZZ_PLAIN)/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c $(OUTPUT)/libmemtop.a
	$(call msg,REPLAY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/driver.c $(OUTPUT)/libmemtop.a $(LDLIBS)

.PHONY: fuzz fuzz-build fuzz-replay

# After the normal object of the same source: whatever header the main
# build generates for it (the skeleton, py_offsets.h) then exists.
$(FUZZ_OUT)/obj/%.o: src/%.c | $(OUTPUT)/obj/%.o
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@

$(FUZZ_OUT)/obj/tests/%.o: tests/fuzz/%.c
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@

$(FUZZ_OUT)/libmemtop-fuzz.a: $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_OUT)/fuzz_%: $(FUZZ_OUT)/obj/tests/fuzz_%.o $(FUZZ_OUT)/libmemtop-fuzz.a
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

$(FUZZ_OUT)/replay_%: $(FUZZ_OUT)/obj/tests/fuzz_%.o $(FUZZ_OUT)/obj/tests/driver.o \
		$(FUZZ_OUT)/libmemtop-fuzz.a
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

fuzz-build: $(FUZZ_BINS) $(FUZZ_REPLAYS)

fuzz-replay: $(FUZZ_REPLAYS)
	$(Q)$(FUZZ_ENV) tests/fuzz/run-replay $(FUZZ_OUT)

fuzz: deps
	$(Q)$(MAKE) --no-print-directory fuzz-build
	$(Q)mkdir -p $(FUZZ_OUT)/crashes; failed=; \
	for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_OUT)/corpus/$$t; \
		echo "  FUZZ     $$t for $(FUZZ_SECONDS)s"; \
		$(FUZZ_ENV) nice -n 10 $(FUZZ_OUT)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
			-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_OUT)/crashes/$$t- \
			$(FUZZ_OUT)/corpus/$$t tests/fuzz/$$t > $(FUZZ_OUT)/$$t.log 2>&1 \
			|| failed="$$failed $$t"; \
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' $(FUZZ_OUT)/$$t.log | tail -2; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: crashed:$$failed (logs: $(FUZZ_OUT)/T.log," \
		"inputs: $(FUZZ_OUT)/crashes/)"; exit 1; fi
