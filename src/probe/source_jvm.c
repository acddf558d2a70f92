// SPDX-License-Identifier: GPL-2.0-only
/*
 * source_jvm.c - the JVM row of the source table (source.h): a JVM's
 * Java heap through memtop's JVMTI agent (jvm_source.h, docs/java.md),
 * beside its native allocations. A JVM memtop will not attach to is said
 * once and its native allocations stay watched; a JVM not up yet, and a
 * command memtop started (-- CMD), are tried again for JAVA_WAIT_S.
 */
#include "probe/source.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "memtop/jvm_wire.h"
#include "probe/jvm_source.h"

#define JVMTI_SO "libmemtop-jvmti.so"
/* How long a JVM whose VM is not up yet (SIGQUIT not handled) is tried
 * again. */
#define JAVA_WAIT_S 30

/* Not sampled, and why: in the facts and said once. */
static int refused(const struct source_env *env, pid_t pid, struct mt_target_facts *f, const char *why)
{
	f->set |= MT_FACT_JAVA;
	snprintf(f->java_note, sizeof(f->java_note), "%s", why);
	source_say(env, "PID %d: its Java heap is not sampled: %s; its native allocations are", pid,
		   why);
	return 0;
}

static void facts_on(const struct jvm_source *s, struct mt_target_facts *f)
{
	f->set |= MT_FACT_JAVA;
	snprintf(f->java, sizeof(f->java), "jvmti");
	snprintf(f->java_note, sizeof(f->java_note), "%s",
		 jvm_source_reused(s) ? "agent reused" : "agent loaded");
	jvm_source_counts(s, &f->java_samples, &f->java_dropped, &f->java_slowdown_pct);
}

static int jvm_row_start(const struct source_env *env, const struct source_proc *p, bool last,
			 void **state, struct mt_target_facts *f)
{
	char why[256], so[PATH_MAX];
	struct jvm_source *s;
	pid_t pid = p->pid;
	int e;

	*state = NULL;
	if (!env->record || env->cfg->inject_mode == MT_INJECT_NEVER ||
	    (p->launched && env->cfg->no_preload))
		return 0; /* nobody takes what it would stream; or nothing may be
			   * loaded into the process (--no-inject, -- CMD with
			   * --no-preload): its maps are not read */
	e = jvm_source_detect(pid, why, sizeof(why));
	if (!e && p->launched && !last)
		return -EAGAIN; /* a command attached as it starts: a `java`
				 * launcher loads libjvm.so later */
	if ((e == -EAGAIN && !last) || !e)
		return e; /* not up yet; or not a JVM */
	if (e < 0)
		return refused(env, pid, f, why);
	if (env->find_lib(JVMTI_SO, so, sizeof(so))) {
		snprintf(why, sizeof(why), "%s not found", JVMTI_SO);
		return refused(env, pid, f, why);
	}
	s = jvm_source_start(pid, so, env->cfg->rate, why, sizeof(why));
	if (!s && errno == EAGAIN && !last)
		return -EAGAIN; /* its VM is still starting */
	if (!s)
		return refused(env, pid, f, why);
	*state = s;
	/* its heap is seen: not a runtime memtop is blind to */
	f->set |= MT_FACT_RUNTIME;
	f->runtime[0] = '\0';
	f->runtime_heap = f->runtime_tool = NULL;
	facts_on(s, f);
	source_say(env, "PID %d: Java heap sampled through memtop's JVMTI agent (%s)", pid,
		   jvm_source_reused(s) ? "reused: an earlier memtop loaded it" : "loaded");
	return 0;
}

static int jvm_row_pump(const struct source_env *env, void *state, struct mt_target_facts *f,
			char *err, size_t errlen)
{
	int e = jvm_source_pump(state, env->record, env->record_ctx, err, errlen);
	__u64 wide;
	pid_t pid;

	if (e) {
		f->set |= MT_FACT_JAVA; /* no longer streaming: java is "" */
		return e;
	}
	if (jvm_source_widened(state, &wide, &pid))
		source_say(env,
			   "PID %d: more than %u Java samples a second: its sampling interval is "
			   "widened to %llu KiB while they are (each sample weighed by its own)",
			   pid, MT_JW_SAMPLES_PER_S_MAX, (unsigned long long)(wide >> 10));
	facts_on(state, f);
	return 0;
}

static void jvm_row_stop(void *state)
{
	jvm_source_stop(state);
}

const struct source_ops source_jvm = {
	.name = "jvmti",
	.wait_s = JAVA_WAIT_S,
	.sees_runtime = true,
	.start = jvm_row_start,
	.pump = jvm_row_pump,
	.stop = jvm_row_stop,
};
