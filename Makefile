# memtop - live, per-call-site memory profiler for running processes.
#
#   make            build build/memtop
#   make demo       install what is missing, build, watch a leaking demo
#   make check      install what is missing, build, run every test
#   make check-quick  the inner loop: layer rules, unit tests, core integration
#   make unit       cmocka unit tests only (no root needed)
#   make integration  end-to-end tests with real probes (root)
#   make werror     -Werror builds with gcc and clang; clang's unit tests run
#   make asan       unit and integration tests with ASan/UBSan (not the sampler)
#   make analyze    scan-build over every source; fails on any finding
#   make bench      overhead benchmarks (not part of check): tests/bench/run,
#                   then tests/bench/alloc_modes (per allocator and mode)
#                   and tests/bench/device.py (the device-memory source)
#   make format     lay the C out by .clang-format; make format-check checks it
#   make fuzz       each libFuzzer harness for FUZZ_SECONDS (30) seconds
#                   (docs/fuzzing.md); make check replays their corpora
#
# V=1 shows the commands. VMLINUX_H=path pins a vmlinux.h instead of
# generating one from VMLINUX_BTF.

OUTPUT      ?= build
CC          ?= gcc
CLANG       ?= clang
BPFTOOL     ?= bpftool
ARCH        := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VMLINUX_H   ?=
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
PREFIX      ?= /usr/local

# Debian packages `make deps` installs when something is missing.
DEB_PKGS := nodejs clang-format libc6-dbg golang-1.21-go golang-1.22-go golang-1.23-go libcapstone-dev python3.11-dev libpython3.11 clang llvm bpftool libbpf-dev libelf-dev libdw-dev libdebuginfod-dev libunwind-dev \
	libncurses-dev zlib1g-dev libcurl4-openssl-dev libiberty-dev libcmocka-dev \
	systemtap-sdt-dev pkg-config make gcc g++ python3 tmux golang-go bpftrace sqlite3 \
	mesa-vulkan-drivers libvulkan-dev pocl-opencl-icd ocl-icd-opencl-dev \
	redis-server redis-tools libjemalloc-dev libgoogle-perftools-dev libclang-rt-14-dev libsqlite3-dev \
	prometheus python3-yaml rustc openjdk-17-jdk-headless

PKGS     := libbpf libelf libdw libdebuginfod libunwind-generic ncursesw zlib libcurl
CFLAGS   ?= -O2 -g
LDFLAGS_EXTRA ?=
# Integration tests `make asan` runs: all but the ones that measure time
# (the scenario scores over minutes, the overhead budget and the in-use
# estimate under its back-off), which an instrumented memtop, 2-3x
# slower, would fail for being slow, not wrong,
# and the two that bound memtop's RSS (a viewer's over a minute, a
# replay's against a small one's), which ASan's quarantine of freed
# memory (up to 256 MiB) makes grow with what was freed, not held.
ASAN_TESTS ?= -test_scenarios -test_overhead -test_backoff -test_viewer_memory_flat_and_up_to_date \
	-test_replay_streams_and_refuses_devices
WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
DEPFLAGS  = -MMD -MP
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Isrc -Iinclude -I$(OUTPUT) \
	-DMEMTOP_VERSION='"$(VERSION)"' -DMEMTOP_LIBDIR='"$(PREFIX)/lib/memtop"'
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -liberty -lm
VERSION  := 0.1.0
# The recursive builds of check, check-quick, werror, asan and analyze run
# two jobs per core: a serial build was a minute of make check on two
# cores, and with one job per core the Go toolchains' builds of their
# standard library (mt_go_1.2x, each under one core for 20-30 s) held the
# jobs while the skeleton and memtop waited (make check's build: 65 s at
# -j2, 50 s at -j4 on two cores).
JOBS     ?= $(shell echo $$((2 * $$(nproc 2>/dev/null || echo 1))))

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Every src/ file but main.c and the in-process sampler goes into one
# archive: the binary, the unit tests and the benchmarks link only the
# objects they use from it. src/ is laid out by pipeline stage
# (docs/architecture.md); private headers sit beside their sources.
SRCS      := $(shell find src -name '*.c' -not -path 'src/sampler/*' -not -path 'src/jvmti/*' \
	-not -name '*_gen.c' | sort)
LIB_SRCS  := $(filter-out src/main.c,$(SRCS))
LIB_OBJS  := $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD_SRCS))

# Go workloads (docs/go.md), built with Debian's go (1.19) and with the
# Go versions of bookworm-backports: static, cgo and stripped variants.
# Caches stay inside the build tree and nothing is fetched, so a fresh
# clone builds offline.
GO_MAIN     := tests/workloads/go/mt_go.go
GO_SRC      := $(GO_MAIN) tests/workloads/go/memprofile_ref.go
GO_ENV      = GOCACHE=$(abspath $(OUTPUT))/go-cache GOPATH=$(abspath $(OUTPUT))/go-path \
	GOFLAGS= GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off GO111MODULE=off
GO_VERSIONS := 1.21 1.22 1.23
GO_WORKLOADS := $(addprefix $(OUTPUT)/workloads/,mt_go mt_go_cgo mt_go_stripped \
	mt_go_noprof mt_go_noprof_1.23 mt_go_pprof $(addprefix mt_go_,$(GO_VERSIONS)))
WORKLOADS += $(GO_WORKLOADS)

# The Rust workload (tests/workloads/rust/mt_rust.rs), built when there is a
# rustc: Debian's (make deps installs it, 1.63 in bookworm) before one on
# PATH (rustup's), so the suite runs what a fresh machine runs.
RUSTC ?= $(firstword $(wildcard /usr/bin/rustc) $(shell command -v rustc 2>/dev/null))
ifneq ($(RUSTC),)
WORKLOADS += $(OUTPUT)/workloads/mt_rust
endif
# Java (docs/java.md): the JVMTI agent needs a JDK's include/jvmti.h at
# build time (Debian's openjdk-17-jdk-headless, `make deps`), the Java
# workload javac. Without them both are left out, and memtop says so
# when it meets a JVM. No JDK is needed where memtop runs.
JAVA_HOME ?= $(patsubst %/bin/javac,%,$(realpath $(shell command -v javac 2>/dev/null)))
JVMTI_INC := $(if $(wildcard $(JAVA_HOME)/include/jvmti.h),-I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux)
JVMTI_SO  := $(if $(JVMTI_INC),$(OUTPUT)/libmemtop-jvmti.so)
JAVA_WORKLOADS := $(if $(JVMTI_INC),$(OUTPUT)/workloads/java/memtop/workload/MtJava.class)
WORKLOADS += $(JAVA_WORKLOADS)

.PHONY: all deps deps-clean demo check check-quick unit integration bench soak clean install \
	werror asan analyze format format-check
.DELETE_ON_ERROR:
.SECONDARY:

all: $(OUTPUT)/memtop $(OUTPUT)/libmemtop-sampler.so $(OUTPUT)/libmemtop-inject.so $(OUTPUT)/libmemtop-v8.so \
	$(OUTPUT)/memtop.1 $(JVMTI_SO)

$(OUTPUT) $(OUTPUT)/obj $(OUTPUT)/tests $(OUTPUT)/workloads:
	$(Q)mkdir -p $@

# --- BPF -------------------------------------------------------------------
$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,VMLINUX,$@)
	$(Q)$(if $(VMLINUX_H),cp $(VMLINUX_H) $@,$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@)

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) $(DEPFLAGS) \
		-idirafter /usr/include/$(shell uname -m)-linux-gnu \
		-Iinclude -I$(OUTPUT) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Only the loader includes the skeleton.
$(OUTPUT)/obj/probe/bpf_loader.o: $(OUTPUT)/memtop.skel.h

# CPython's structure offsets, from its own internal headers (docs/python.md):
# the interpreter version memtop reads frames of is the one whose -dev
# package is installed at build time.
PYTHON_VERSION ?= 3.11
$(OUTPUT)/py_offsets.h: src/stacks/py_offsets_gen.c | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(CC) -O0 -w -I/usr/include/python$(PYTHON_VERSION) -o $(OUTPUT)/py_offsets_gen $<
	$(Q)$(OUTPUT)/py_offsets_gen > $@.tmp && mv $@.tmp $@
$(OUTPUT)/obj/stacks/python.o: $(OUTPUT)/py_offsets.h

# --- user space ------------------------------------------------------------
$(OUTPUT)/obj/%.o: src/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUTPUT)/libmemtop.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUTPUT)/memtop: $(OUTPUT)/obj/main.o $(OUTPUT)/libmemtop.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS_EXTRA) -o $@ $^ $(LDLIBS)

# The manual page, generated from the option and key tables --help and
# the live view use (src/manpage.c).
$(OUTPUT)/memtop.1: $(OUTPUT)/memtop
	$(call msg,MAN,$@)
	$(Q)$< --man > $@

# The in-process sampler (docs/sampler.md): no dependency beyond glibc, so
# it can be preloaded into any glibc process.
SAMPLER_SRCS := src/sampler/memtop_sampler.c src/sampler/next_alloc.c
SAMPLER_CFLAGS ?= -O2 -g $(filter -Werror,$(CFLAGS))
$(OUTPUT)/libmemtop-sampler.so: $(SAMPLER_SRCS) $(wildcard src/sampler/*.h) include/memtop/sampler_abi.h \
		src/util/elf_dynhash.h | $(OUTPUT)
	$(call msg,SO,$@)
	$(Q)$(CC) $(SAMPLER_CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Isrc -Iinclude -fPIC -shared \
		-fvisibility=hidden -ftls-model=initial-exec -fno-plt -fno-builtin \
		-o $@ $(SAMPLER_SRCS) -Wl,-z,now

# The sampler memtop maps into a running process itself (--inject,
# docs/inject.md): no C library, no imports, and no relocation at all,
# which the recipe checks. It keeps frame pointers: the frame-pointer walk
# (--stack-copy 0) climbs through it to the caller of malloc.
$(OUTPUT)/libmemtop-inject.so: src/sampler/inject_sampler.c $(wildcard src/sampler/*.h) include/memtop/sampler_abi.h | $(OUTPUT)
	$(call msg,SO,$@)
	$(Q)$(CC) $(SAMPLER_CFLAGS) $(WARN) -std=gnu11 -Isrc -Iinclude -fPIC -shared -nostdlib \
		-ffreestanding -fno-stack-protector -fvisibility=hidden -fno-plt -fno-omit-frame-pointer \
		-Wl,--no-undefined -Wl,-z,noexecstack -Wl,-z,noseparate-code -o $@ $<
	$(Q)if readelf -rW $@ | grep -q '^ *[0-9a-f]\{12,\} '; then \
		echo "$@ has relocations: memtop cannot map it"; rm -f $@; exit 1; fi

# The JVMTI agent memtop loads into running JVMs (docs/java.md): glibc
# and the JVM's own interface only; the one symbol it exports is
# Agent_OnAttach (and Agent_OnLoad, which refuses).
$(OUTPUT)/libmemtop-jvmti.so: src/jvmti/memtop_jvmti.c src/jvmti/queue.h include/memtop/jvm_wire.h | $(OUTPUT)
	$(call msg,SO,$@)
	$(Q)$(CC) $(SAMPLER_CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Isrc -Iinclude $(JVMTI_INC) -fPIC -shared \
		-fvisibility=hidden -o $@ $< -lpthread -Wl,-z,now -Wl,-z,noexecstack

# The agent memtop maps into a Node.js process (docs/node.md): the same
# rules as libmemtop-inject.so (no C library, no imports, no relocation),
# and no call the compiler would make to memcpy/memset behind its back
# (gcc turns loops into them unless told not to; clang does not under
# -ffreestanding; -Wl,--no-undefined fails the link if either did).
$(OUTPUT)/libmemtop-v8.so: src/sampler/v8_agent.c include/memtop/v8_abi.h | $(OUTPUT)
	$(call msg,SO,$@)
	$(Q)$(CC) $(SAMPLER_CFLAGS) $(WARN) -std=gnu11 -Isrc -Iinclude -fPIC -shared -nostdlib \
		-ffreestanding -fno-builtin $(if $(findstring clang,$(CC)),,-fno-tree-loop-distribute-patterns) \
		-fno-stack-protector \
		-fvisibility=hidden -fno-plt -fno-omit-frame-pointer \
		-Wl,--no-undefined -Wl,-z,noexecstack -Wl,-z,noseparate-code -o $@ $<
	$(Q)if readelf -rW $@ | grep -q '^ *[0-9a-f]\{12,\} '; then \
		echo "$@ has relocations: memtop cannot map it"; rm -f $@; exit 1; fi

# --- tests -----------------------------------------------------------------
$(OUTPUT)/tests/test_%: tests/unit/test_%.c $(OUTPUT)/libmemtop.a | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS_EXTRA) $(DEPFLAGS) -Itests/unit -o $@ $< $(OUTPUT)/libmemtop.a \
		$(LDLIBS) -lcmocka

# Workloads print their own ground truth. Built as distributions build
# (-O2, no frame pointers) unless the file asks otherwise on its first
# line with "// cflags: ...".
$(OUTPUT)/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/*.h) | $(OUTPUT)/workloads
	$(call msg,WORK,$@)
	$(Q)$(CC) $$(sed -n '1s|^// cflags:||p' $<) -g -Wall -o $@ $< -lpthread -lm \
		-L$(OUTPUT)/workloads $$(sed -n '2s|^// ldflags:||p' $<)

# The CUDA driver library's stand-in (tests/device/cuda_standin.c: the
# memory calls' ABI, backed by host memory) for the device-memory tests on
# machines without a GPU; mt_cuda dlopens it from $MT_CUDA_LIB.
$(OUTPUT)/workloads/cuda-standin/libcuda.so.1: tests/device/cuda_standin.c | $(OUTPUT)/workloads
	$(call msg,SO,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -Wall -fPIC -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 -o $@ $<
$(OUTPUT)/workloads/mt_cuda: $(OUTPUT)/workloads/cuda-standin/libcuda.so.1
WORKLOADS += $(OUTPUT)/workloads/cuda-standin/libcuda.so.1

# A je_-prefixed static jemalloc (as --with-jemalloc-prefix=je_ builds
# it), made from Debian's libjemalloc_pic.a: every public C name X of the
# archive becomes je_X, in definitions and references alike.
JEMALLOC_PIC := /usr/lib/x86_64-linux-gnu/libjemalloc_pic.a
$(OUTPUT)/workloads/libjemalloc_je.a: $(JEMALLOC_PIC) | $(OUTPUT)/workloads
	$(call msg,AR,$@)
	$(Q)nm -g --defined-only $< | awk 'NF == 3 && $$3 !~ /^(je_|_|DW\.)/ { print $$3 " je_" $$3 }' | \
		sort -u > $@.syms
	$(Q)objcopy --redefine-syms=$@.syms $< $@
	$(Q)rm -f $@.syms
$(OUTPUT)/workloads/mt_jemalloc_prefixed: $(OUTPUT)/workloads/libjemalloc_je.a

# The Go modules' test reads real Go binaries (tests/unit/test_go.c).
$(OUTPUT)/tests/test_go: $(OUTPUT)/workloads/mt_go $(OUTPUT)/workloads/mt_go_stripped
$(OUTPUT)/tests/test_inject_cost: $(OUTPUT)/libmemtop-inject.so
$(OUTPUT)/tests/test_go: ALL_CFLAGS += -DMT_GO_FIXTURE_DIR='"$(OUTPUT)/workloads"'

# The decoder cross-check links Capstone (tests only: memtop does not).
$(OUTPUT)/tests/test_x86_decode_capstone: LDLIBS += -lcapstone
$(OUTPUT)/tests/test_probe_place: LDLIBS += -lcapstone

unit: $(UNIT_BINS)
	$(Q)tests/run-unit $(UNIT_BINS)

integration: $(OUTPUT)/memtop $(WORKLOADS)
	$(Q)tests/run-integration

# The newer Go toolchains (golang-1.2x-go) come from bookworm-backports:
# tools/apt-backports adds it, from the mirror and keyring the machine's
# bookworm suite already uses, only when one of them is missing and no
# source has backports yet; deps-clean removes the one file it adds.
# APT_ETC: the apt configuration to read and change (tests use a fake one).
APT_ETC ?= /etc/apt
deps:
	$(Q)missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
		| grep -q 'ok installed' || echo $$p; done); \
	if echo "$$missing" | grep -q 'golang-1\.2'; then \
		APT_ETC=$(APT_ETC) tools/apt-backports add || exit 1; \
	fi; \
	if [ -n "$$missing" ]; then \
		echo "  APT      $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

deps-clean:
	$(Q)APT_ETC=$(APT_ETC) tools/apt-backports remove

# The inner loop (about two minutes): everything a change usually breaks.
QUICK_TESTS := test_core test_errors test_stacks::test_chain test_sampler test_install
check-quick: deps
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all $(UNIT_BINS) $(WORKLOADS)
	$(Q)tests/check-layers && tests/check-reliability && tests/run-unit $(UNIT_BINS) && tests/run-integration -j4 $(QUICK_TESTS)

# Warnings are errors with both compilers; the clang build's unit tests
# run too, so code that only works by one compiler's accident shows.
werror:
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory OUTPUT=$(OUTPUT)/werror-gcc CC=gcc CFLAGS="-O2 -g -Werror" \
		all $(patsubst $(OUTPUT)/%,$(OUTPUT)/werror-gcc/%,$(UNIT_BINS))
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory OUTPUT=$(OUTPUT)/werror-clang CC=clang CFLAGS="-O2 -g -Werror" \
		all $(patsubst $(OUTPUT)/%,$(OUTPUT)/werror-clang/%,$(UNIT_BINS))
	$(Q)tests/run-unit $(patsubst $(OUTPUT)/%,$(OUTPUT)/werror-clang/%,$(UNIT_BINS))

# memtop and its tests under AddressSanitizer and UBSan. The preloaded
# sampler is built as usual (SAMPLER_CFLAGS): an instrumented library
# cannot be preloaded into uninstrumented targets.
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
asan: deps
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory OUTPUT=$(OUTPUT)/asan CFLAGS="$(ASAN_FLAGS)" \
		LDFLAGS_EXTRA="-fsanitize=address,undefined" all \
		$(patsubst $(OUTPUT)/%,$(OUTPUT)/asan/%,$(UNIT_BINS) $(WORKLOADS))
	$(Q)ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/run-unit $(patsubst $(OUTPUT)/%,$(OUTPUT)/asan/%,$(UNIT_BINS))
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory fuzz-replay
	$(Q)ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 MEMTOP_BUILD=$(OUTPUT)/asan \
		tests/run-integration $(ASAN_TESTS)

# clang's static analyzer over the whole build; any finding fails.
analyze:
	$(Q)rm -rf $(OUTPUT)/analyze
	$(Q)scan-build --status-bugs --exclude $(OUTPUT) -o $(OUTPUT)/analyze-report $(MAKE) -j$(JOBS) --no-print-directory \
		OUTPUT=$(OUTPUT)/analyze CC=clang all

check: deps
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all $(UNIT_BINS) $(WORKLOADS) $(FUZZ_PLAIN_REPLAYS)
	$(Q)tests/run-all $(UNIT_BINS)

demo: deps
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all $(OUTPUT)/workloads/demo_leaky_server
	$(Q)tests/demo.sh

# Long runs that look for growth (root), niced so that they share the
# machine: a memtop attach viewer for SOAK_MINUTES (default 60), then
# --replay of endless input (SOAK_REPLAY_S, default 60).
SOAK_MINUTES ?= 60
soak: $(OUTPUT)/memtop $(OUTPUT)/workloads/scenario_bursts
	$(Q)SOAK_MINUTES=$(SOAK_MINUTES) nice -n 10 tests/soak/viewer
	$(Q)nice -n 10 tests/soak/replay_endless

bench: deps
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all $(WORKLOADS)
	$(Q)tests/bench/run
	$(Q)tests/bench/alloc_modes
	$(Q)tests/bench/device.py

# Everything the binary looks for, where it looks (EXE_DIR/../lib/memtop
# for the sampler, EXE_DIR/../share/memtop/themes for themes), so an
# installed tree works under any DESTDIR and PREFIX.
install: $(OUTPUT)/memtop $(OUTPUT)/libmemtop-sampler.so $(OUTPUT)/libmemtop-inject.so $(OUTPUT)/libmemtop-v8.so \
	$(OUTPUT)/memtop.1 $(JVMTI_SO)
	install -D -m 0755 $(OUTPUT)/memtop $(DESTDIR)$(PREFIX)/bin/memtop
	install -D -m 0755 $(OUTPUT)/libmemtop-sampler.so $(DESTDIR)$(PREFIX)/lib/memtop/libmemtop-sampler.so
	install -D -m 0644 $(OUTPUT)/libmemtop-inject.so $(DESTDIR)$(PREFIX)/lib/memtop/libmemtop-inject.so
	install -D -m 0644 $(OUTPUT)/libmemtop-v8.so $(DESTDIR)$(PREFIX)/lib/memtop/libmemtop-v8.so
	$(if $(JVMTI_SO),install -D -m 0644 $(JVMTI_SO) $(DESTDIR)$(PREFIX)/lib/memtop/libmemtop-jvmti.so)
	install -d $(DESTDIR)$(PREFIX)/share/memtop/themes $(DESTDIR)$(PREFIX)/share/doc/memtop
	install -m 0644 themes/*.theme $(DESTDIR)$(PREFIX)/share/memtop/themes/
	install -m 0644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/memtop/
	install -D -m 0644 $(OUTPUT)/memtop.1 $(DESTDIR)$(PREFIX)/share/man/man1/memtop.1
	install -D -m 0644 completions/memtop.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/memtop
	install -D -m 0644 completions/_memtop $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_memtop

$(OUTPUT)/workloads/java/memtop/workload/MtJava.class: tests/workloads/java/MtJava.java | $(OUTPUT)/workloads
	$(call msg,JAVAC,$@)
	$(Q)$(JAVA_HOME)/bin/javac -d $(OUTPUT)/workloads/java $<

$(OUTPUT)/workloads/mt_go: $(GO_SRC) | $(OUTPUT)/workloads
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) CGO_ENABLED=0 go build -o $@ $^

$(OUTPUT)/workloads/mt_go_stripped: $(GO_SRC) | $(OUTPUT)/workloads
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) CGO_ENABLED=0 go build -ldflags='-s -w' -o $@ $^

# Nothing references runtime.MemProfile: MemProfileRate starts at 0
# (docs/go.md), with Debian's go and with the newest Go memtop knows.
$(OUTPUT)/workloads/mt_go_noprof: $(GO_MAIN) | $(OUTPUT)/workloads
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) CGO_ENABLED=0 go build -o $@ $^

$(OUTPUT)/workloads/mt_go_noprof_1.23: $(GO_MAIN) | $(OUTPUT)/workloads
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) CGO_ENABLED=0 /usr/lib/go-1.23/bin/go build -o $@ $^

$(OUTPUT)/workloads/mt_rust: tests/workloads/rust/mt_rust.rs | $(OUTPUT)/workloads
	$(call msg,RUSTC,$@)
	$(Q)$(RUSTC) --edition 2021 -O -g -o $@ $<

# runtime/pprof imported, its heap profile written on SIGUSR1
$(OUTPUT)/workloads/mt_go_pprof: $(GO_MAIN) tests/workloads/go/pprof_dump.go | $(OUTPUT)/workloads
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) CGO_ENABLED=0 go build -o $@ $^

$(OUTPUT)/workloads/mt_go_cgo: $(GO_SRC) tests/workloads/go/cgo.go | $(OUTPUT)/workloads
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) CGO_ENABLED=1 go build -tags cgo_variant -o $@ $^

$(OUTPUT)/workloads/mt_go_%: $(GO_SRC) | $(OUTPUT)/workloads
	$(call msg,GO,$@)
	$(Q)$(GO_ENV) CGO_ENABLED=0 /usr/lib/go-$*/bin/go build -o $@ $(GO_SRC)

# The tree's C is laid out by .clang-format (clang-format 14, Debian's):
# make format rewrites it, make format-check (CI) fails on any difference.
# Tables laid out by hand sit between clang-format off/on comments.
FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	$(Q)clang-format -i $(FORMAT_SRCS)

format-check:
	$(Q)clang-format --dry-run --Werror $(FORMAT_SRCS) && echo "  FORMAT   $(words $(FORMAT_SRCS)) files match .clang-format"

clean:
	rm -rf $(OUTPUT)

include tests/fuzz/fuzz.mk

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
