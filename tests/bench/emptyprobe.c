// SPDX-License-Identifier: GPL-2.0-only
/*
 * emptyprobe.c - the benchmark's reference tool: empty BPF programs on
 * allocator functions of one process, to measure the trap floor that any
 * uprobe-based tracer pays before it does any work.
 *
 *   emptyprobe [--entry] PID LIB SYMBOL...
 *
 * For each SYMBOL of LIB (an ELF file path) the probe goes where
 * probe_place_choose() puts it (need_args, no return probe), or at the
 * function entry with --entry. Each probe is a per-PID uprobe perf event
 * (the "uprobe" PMU) running a two-instruction BPF program (r0 = 0; exit).
 * Raw syscalls, no libbpf: nothing else runs in the handler. Prints
 * "emptyprobe: attached to PID N: malloc+0 (emulated) ..." on stderr once
 * every probe is live, then waits for SIGINT/SIGTERM or for the process
 * to exit. Exit status 1 on any failure, with a message.
 */
#include <errno.h>
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "readers/elf_file.h"
#include "probe/probe_place.h"

#define MAX_PROBES 16

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int empty_prog_load(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (__u64)(unsigned long)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (__u64)(unsigned long)"GPL";
	attr.log_buf = (__u64)(unsigned long)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		fprintf(stderr, "emptyprobe: BPF_PROG_LOAD: %s\n%s", strerror(errno), log);
	return fd;
}

static int uprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

static int probe_open(int type, pid_t pid, const char *path, __u64 offset, int prog_fd)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (__u32)type;
	attr.config1 = (__u64)(unsigned long)path; /* uprobe_path */
	attr.config2 = offset;                     /* probe_offset: file offset */
	fd = (int)syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int main(int argc, char **argv)
{
	char detail[512] = "";
	size_t used = 0;
	bool entry = false;
	struct elf_file *ef;
	int prog, type, i, first = 1;
	const char *lib;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--entry")) {
		entry = true;
		first = 2;
	}
	if (argc < first + 3 || argc - first - 2 > MAX_PROBES) {
		fprintf(stderr, "usage: emptyprobe [--entry] PID LIB SYMBOL...\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[first]);
	lib = argv[first + 1];
	ef = elf_file_open(lib);
	if (!ef) {
		fprintf(stderr, "emptyprobe: %s: %s\n", lib, strerror(errno));
		return 1;
	}
	type = uprobe_pmu_type();
	prog = empty_prog_load();
	if (type < 0 || prog < 0) {
		fprintf(stderr, "emptyprobe: no uprobe PMU or BPF program\n");
		return 1;
	}
	for (i = first + 2; i < argc; i++) {
		struct probe_place pp = { .offset = 0 };
		__u64 off, size;
		__u8 code[64];
		size_t len;
		int fd;

		if (elf_file_func_offset(ef, argv[i], &off, &size)) {
			fprintf(stderr, "emptyprobe: %s: no function %s\n", lib, argv[i]);
			return 1;
		}
		len = size < sizeof(code) ? (size_t)size : sizeof(code);
		if (elf_file_read(ef, off, code, len) ||
		    probe_place_choose(code, len, (__u32)size, false, true, &pp)) {
			fprintf(stderr, "emptyprobe: %s: cannot read %s\n", lib, argv[i]);
			return 1;
		}
		if (entry) {
			/* The chooser takes the entry whenever it is emulated. */
			pp.emulated = pp.offset == 0 && pp.emulated;
			pp.offset = 0;
		}
		fd = probe_open(type, pid, lib, off + pp.offset, prog);
		if (fd < 0) {
			fprintf(stderr, "emptyprobe: uprobe %s+%u in pid %d: %s\n", argv[i],
				pp.offset, pid, strerror(-fd));
			return 1;
		}
		used += (size_t)snprintf(detail + used, sizeof(detail) - used, " %s+%u (%s)", argv[i],
					 pp.offset, pp.emulated ? "emulated" : "single-stepped");
		if (used >= sizeof(detail))
			used = sizeof(detail) - 1;
	}
	elf_file_close(ef);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "emptyprobe: attached to PID %d:%s\n", pid, detail);
	while (!stop && kill(pid, 0) == 0)
		usleep(100 * 1000);
	return 0;
}
