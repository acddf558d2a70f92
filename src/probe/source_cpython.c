// SPDX-License-Identifier: GPL-2.0-only
/*
 * source_cpython.c - the CPython row of the source table (source.h): a
 * CPython interpreter's frames, read by the BPF side at every sample of
 * the process (stacks/python.h, docs/python.md), so that its sites are
 * Python functions. An interpreter of a version memtop cannot read is
 * said once, and the process is watched as native code. A command memtop
 * started (-- CMD) is tried again for CPYTHON_WAIT_S: it is attached
 * before its exec.
 *
 * Which objects of it are seen is the heap mechanism's matter
 * (mechanism.h): pymalloc's through a sampler that wraps it, else only
 * what comes from malloc.
 */
#include "probe/source.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "readers/proc_maps.h"
#include "stacks/python.h"

#define CPYTHON_WAIT_S 3

/* The interpreter's addresses are the BPF side's, forgotten with the
 * target: the row keeps nothing but that it is on. */
static char row_on;

static int cpython_row_start(const struct source_env *env, const struct source_proc *p, bool last,
			     void **state, struct mt_target_facts *f)
{
	struct mt_maps maps = { 0 };
	char msg[PATH_MAX + 128];
	struct mt_py_proc py;
	int e;

	(void)f;
	*state = NULL;
	if (!env->bpf)
		return 0;
	e = proc_maps_read(p->pid, &maps);
	if (!e) {
		e = python_detect(p->pid, &maps, &py, NULL, msg, sizeof(msg));
		proc_maps_free(&maps);
	}
	if (e == -ENOTSUP) {
		source_say(env, "PID %d: %s; its Python frames are not shown", p->pid, msg);
		return 0;
	}
	if (e)
		return p->launched && !last ? -EAGAIN : 0; /* not (yet) CPython */
	if (bpf_loader_add_python(env->bpf, p->pid, &py)) {
		source_say(env, "PID %d: cannot read its Python frames: %s", p->pid, strerror(errno));
		return 0;
	}
	*state = &row_on;
	return 0;
}

static int cpython_row_pump(const struct source_env *env, void *state, struct mt_target_facts *f,
			    char *err, size_t errlen)
{
	(void)env, (void)state, (void)f, (void)err, (void)errlen;
	return 0; /* its frames come with the samples */
}

static void cpython_row_stop(void *state)
{
	(void)state;
}

const struct source_ops source_cpython = {
	.name = "cpython",
	.wait_s = CPYTHON_WAIT_S,
	.start = cpython_row_start,
	.pump = cpython_row_pump,
	.stop = cpython_row_stop,
};
