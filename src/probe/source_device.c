// SPDX-License-Identifier: GPL-2.0-only
/*
 * source_device.c - the device-memory row of the source table (source.h):
 * uprobes on the allocate and free calls of the device APIs a process
 * maps (Vulkan, OpenCL, CUDA; device_source.h, docs/device-memory.md),
 * whose records the BPF program makes. A library mapped later (dlopen)
 * is found by a later look, at most once a second (less often where a
 * look is long: LOOK_SHARE).
 */
#include "probe/source.h"

#include <stdio.h>
#include <stdlib.h>

#include "probe/device_source.h"
#include "util/clock.h"

/* How often the process's mappings are looked at for a new library. */
#define LOOK_EVERY_NS 1000000000ULL
/* ... or less often where a look itself is long (a process with many MiB
 * of maps): the looks take at most 1/LOOK_SHARE of memtop's time. */
#define LOOK_SHARE 50

struct device_row {
	struct device_probes *dp;
	pid_t pid;
	__u64 next_look_ns;
};

static void look(const struct source_env *env, struct device_row *r)
{
	char msg[512], line[600];

	__u64 t0 = clock_mono_ns(), took;

	device_source_scan(env->bpf, r->dp, msg, sizeof(msg));
	took = clock_mono_ns() - t0;
	r->next_look_ns =
		t0 + (took * LOOK_SHARE > LOOK_EVERY_NS ? took * LOOK_SHARE : LOOK_EVERY_NS);
	if (msg[0] && env->warn) {
		snprintf(line, sizeof(line), "PID %d: device memory: %s", r->pid, msg);
		env->warn(env->warn_ctx, line);
	}
}

static int device_row_start(const struct source_env *env, const struct source_proc *p, bool last,
			    void **state, struct mt_target_facts *f)
{
	struct device_row *r;

	(void)last, (void)f;
	*state = NULL;
	if (!env->bpf)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return 0;
	r->dp = device_probes_new(p->pid);
	if (!r->dp) {
		free(r);
		return 0;
	}
	r->pid = p->pid;
	look(env, r);
	*state = r;
	return 0;
}

static int device_row_pump(const struct source_env *env, void *state, struct mt_target_facts *f,
			   char *err, size_t errlen)
{
	struct device_row *r = state;

	(void)f, (void)err, (void)errlen;
	if (clock_mono_ns() >= r->next_look_ns)
		look(env, r);
	return 0;
}

static void device_row_stop(void *state)
{
	struct device_row *r = state;

	if (!r)
		return;
	device_probes_free(r->dp); /* every link released: nothing stays attached */
	free(r);
}

const struct source_ops source_device = {
	.name = "device",
	.start = device_row_start,
	.pump = device_row_pump,
	.stop = device_row_stop,
};
