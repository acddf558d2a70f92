// SPDX-License-Identifier: GPL-2.0-only
/*
 * watch.c - the watched processes and their probes (watch.h).
 */
#include "probe/watch.h"
#include "probe/link_release.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "probe/cgroup.h"
#include "probe/inject_got.h"
#include "probe/cmd_end.h"
#include "probe/cmd_log.h"
#include "probe/runtime.h"
#include "probe/exits.h"
#include "probe/mechanism.h"
#include "stacks/python.h"
#include "util/clock.h"
#include "util/grow.h"

/* How many refreshes look for the runtime of a launched command (it
 * loads libjvm.so at its start, after memtop attached). */
#define RUNTIME_CHECKS_LAUNCHED 10

/* How long a new process may take to map glibc before it is given up. */
#define PENDING_TIMEOUT_NS (5 * 1000000000ULL)

void watch_warn(struct watch_set *ws, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!ws->env.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ws->env.warn(ws->env.warn_ctx, msg);
}

/* Hand a report about a watched process to the caller (env.facts). */
void watch_report(struct watch_set *ws, const struct mt_target_facts *f)
{
	if (ws->env.facts)
		ws->env.facts(ws->env.warn_ctx, f);
}

void watch_init(struct watch_set *ws, const struct watch_env *env)
{
	memset(ws, 0, sizeof(*ws));
	ws->env = *env;
	ws->cgroup_fd = -1;
	ws->duty = 1.0;
	ws->launch.pid = -1;
	ws->launch.go_fd = -1;
	ws->launch.err_fd = -1;
}

/* The map of held newcomers (hold.h). It outlives the holds: a process
 * held as memtop stops holding is let go through it. */
static int held_map(const struct watch_set *ws)
{
	return bpf_loader_held_fd(ws->env.bpf);
}

static struct watched *find(struct watch_set *ws, pid_t pid)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (ws->v[i].pid == pid)
			return &ws->v[i];
	return NULL;
}

static struct watched *add(struct watch_set *ws, pid_t pid)
{
	struct watched *w;

	if (grow_array(&ws->v, &ws->cap, (size_t)ws->n + 1, sizeof(*ws->v)))
		return NULL;
	w = &ws->v[ws->n++];
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	return w;
}

/* ---- preparing ------------------------------------------------------------ */

/* Strings interned from now on on w's behalf are charged to its target
 * (util/strpool.h), or to w until it has one. Returns the budget to put
 * back. */
static struct strpool_budget *charge_to(struct watch_set *ws, struct watched *w)
{
	struct strpool_budget *b = ws->env.names ? ws->env.names(ws->env.warn_ctx, w->pid) : NULL;

	return strpool_charge(b ? b : &w->names);
}

/* A failure to prepare or attach a process that was there when memtop
 * found it, said as what happened when the cause is that it exited
 * meanwhile (its maps, mapped files and probes went with it): not
 * "cannot read /proc/N/map_files/...". A command memtop launched is its
 * child, and its end is told by its wait status. */
static int exited_meanwhile(const struct watched *w, int e, char *err, size_t errlen)
{
	if (e && e != -ENOMEM && !w->launched && !target_alive(w->pid)) {
		snprintf(err, errlen, "PID %d (%s) exited while memtop was attaching", w->pid,
			 w->comm);
		return -ESRCH;
	}
	return e;
}

static int prepare_found(struct watch_set *ws, struct watched *w, char *err, size_t errlen);

static int prepare_process(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	int e = target_check(w->pid, w->comm, err, errlen);

	return e ? e : exited_meanwhile(w, prepare_found(ws, w, err, errlen), err, errlen);
}

/* prepare_process() of a process target_check() found: its row of the
 * mechanism table chosen (mechanism.h). */
static int prepare_found(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	/* from now on this PID means this process running this program */
	if (target_identity(w->pid, &w->id)) {
		snprintf(err, errlen, "PID %d (%s) has exited", w->pid, w->comm);
		return -ESRCH;
	}
	return mechanism_choose(ws, w, err, errlen);
}

/* What the maps and files of w name is charged to it. */
static int prepare_running(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	struct strpool_budget *was = charge_to(ws, w);
	int e = prepare_process(ws, w, err, errlen);

	strpool_charge(was);
	return e;
}

int watch_prepare_pid(struct watch_set *ws, pid_t pid, char *err, size_t errlen)
{
	struct watched *w;
	int e;

	if (find(ws, pid))
		return 0;
	w = add(ws, pid);
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e = prepare_running(ws, w, err, errlen);
	if (e)
		ws->n--;
	return e;
}

/* A file memtop ships: next to its binary (a build tree), in
 * EXE_DIR/../lib/memtop (an installed tree, wherever DESTDIR put it),
 * else where `make install` with this PREFIX puts it. */
int watch_find_lib(const char *name, char *path, size_t len)
{
	static const char *const beside[] = { "", "../lib/memtop/" };
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t i;

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		for (i = 0; slash && i < sizeof(beside) / sizeof(beside[0]); i++) {
			int w = snprintf(path, len, "%.*s/%s%s", (int)(slash - exe), exe, beside[i],
					 name);

			if (w > 0 && (size_t)w < len && !access(path, R_OK))
				return 0;
		}
	}
	snprintf(path, len, "%s/%s", MEMTOP_LIBDIR, name);
	return access(path, R_OK) ? -ENOENT : 0;
}

int watch_prepare_command(struct watch_set *ws, char *err, size_t errlen)
{
	const struct mt_config *cfg = ws->env.cfg;
	struct watched *w = add(ws, 0);
	struct mech_launch l = { 0 };
	char scratch[PATH_MAX];
	bool created;
	int e, log_fd;

	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (target_find_exe(cfg->cmd_argv[0], l.exe, sizeof(l.exe)))
		l.exe[0] = '\0'; /* the launch says why */
	e = mechanism_choose_command(ws, w, &l, err, errlen);
	if (e) {
		ws->n--;
		return e;
	}
	/* its output goes to a file, never over the TUI or into -b/--json */
	log_fd = cmd_log_open(cfg->cmd_log, ws->launch.log_path, sizeof(ws->launch.log_path),
			      &created, err, errlen);
	if (log_fd < 0) {
		ws->n--;
		ws->launch.log_path[0] = '\0';
		return log_fd;
	}
	/* the C library it will load is probed, unless its runtime samples
	 * itself (lib is its executable then) */
	e = target_launch(cfg->cmd_argv, l.preload, cfg->rate, log_fd, !cfg->batch, l.static_ok,
			  &ws->launch, l.static_ok ? scratch : w->lib,
			  l.static_ok ? sizeof(scratch) : sizeof(w->lib), err, errlen);
	close(log_fd);
	if (e) {
		if (created)
			unlink(ws->launch.log_path);
		ws->launch.log_path[0] = '\0';
		ws->n--;
		return e;
	}
	cmd_log_rename(ws->launch.log_path, sizeof(ws->launch.log_path), cfg->cmd_log != NULL,
		       ws->launch.pid);
	ws->launch.log_created = created;
	w->pid = ws->launch.pid;
	w->launched = true;
	snprintf(w->comm, sizeof(w->comm), "%s", basename(cfg->cmd_argv[0]));
	w->mech->launched(ws, w, &l);
	return 0;
}

int watch_prepare_cgroup(struct watch_set *ws, const char *spec, char *err, size_t errlen)
{
	char root[PATH_MAX], msg[512];
	pid_t *pids = NULL;
	int n, i, e, watched = 0;

	e = cgroup_v2_root(root, sizeof(root), err, errlen);
	if (!e)
		e = cgroup_resolve(root, spec, ws->cgroup_dir, sizeof(ws->cgroup_dir), err, errlen);
	if (e)
		return e;
	ws->cgroup_fd = open(ws->cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ws->cgroup_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot open %s: %s", ws->cgroup_dir, strerror(errno));
		return e;
	}
	n = cgroup_pids(ws->cgroup_dir, &pids);
	if (n < 0) {
		snprintf(err, errlen, "cannot list the processes of %s: %s", ws->cgroup_dir,
			 strerror(-n));
		return n;
	}
	for (i = 0; i < n; i++) {
		struct watched *w;

		if (pids[i] == getpid())
			continue;
		if (!watch_prepare_pid(ws, pids[i], msg, sizeof(msg))) {
			watched++;
			continue;
		}
		watch_warn(ws, "%s: not watched", msg);
		w = add(ws, pids[i]); /* said once: not taken again by a rescan */
		if (w)
			w->gone = true;
	}
	free(pids);
	if (!watched) {
		snprintf(err, errlen, "cgroup %s has no process memtop can watch%s", ws->cgroup_dir,
			 n ? "" : " (it is empty)");
		return -ESRCH;
	}
	return 0;
}

/* ---- attaching --------------------------------------------------------------- */

/* The process samples its own allocations (mechanism.h): only sampled
 * calls reach memtop's probes. */
static bool samples_itself(const struct watched *w)
{
	return w->mech && w->mech->samples_itself;
}

/* Does it watch a runtime's own heap (mechanism.h)? */
static bool watches_runtime(const struct watched *w)
{
	return w->mech && w->mech->watches_runtime;
}

/* The managed runtime of w, for the words about memory memtop does not
 * see (model/unseen.h): none for CPython where w's sampler wraps its
 * object allocator (mechanism.h, sees_pymalloc). */
static void set_runtime(struct mt_target_facts *t, const struct watched *w)
{
	struct runtime_info rt;

	t->set |= MT_FACT_RUNTIME;
	t->runtime[0] = '\0';
	t->runtime_heap = t->runtime_tool = NULL;
	if (runtime_detect(w->pid, &rt) || !rt.name ||
	    (w->mech && w->mech->sees_pymalloc && !strcmp(rt.name, "CPython")))
		return;
	snprintf(t->runtime, sizeof(t->runtime), "%s", rt.name);
	t->runtime_heap = rt.heap;
	t->runtime_tool = rt.tool;
}

/* The prefixed allocator beside the serving one, chained to its probes
 * (attach_chain); one that cannot be probed is said, and the rest stays
 * watched. */
static void attach_extra(struct watch_set *ws, struct watched *w)
{
	const struct mt_config *cfg = ws->env.cfg;
	struct attach_info info;
	struct mt_probe_set *ps;
	char err[512];

	ps = attach_target(ws->env.bpf, w->pid, w->extra.path, w->extra.alloc, w->extra.prefix,
			   cfg->probe_mode != MT_PROBE_URETPROBE, &info, err, sizeof(err));
	if (!ps) {
		watch_warn(ws, "PID %d: its %s%s... calls are not seen: %s", w->pid,
			   w->extra.prefix, "malloc", err);
		return;
	}
	attach_chain(w->probes, ps);
	attach_info_merge(&ws->info, &info, w->extra.prefix);
}

/* ---- the source table (probe/source.h) ------------------------------------ */

/* A row's phase on a process (struct source_slot). */
enum { SOURCE_UNCHECKED = 0, SOURCE_WAITING, SOURCE_OFF, SOURCE_ON };
/* How often a row that said "not yet" is tried again. */
#define SOURCE_RETRY_NS (500 * 1000000ULL)

static struct source_env source_env_of(const struct watch_set *ws)
{
	return (struct source_env){ .cfg = ws->env.cfg,
				    .warn = ws->env.warn,
				    .warn_ctx = ws->env.warn_ctx,
				    .record = ws->env.record,
				    .record_ctx = ws->env.record_ctx,
				    .bpf = ws->env.bpf,
				    .find_lib = watch_find_lib };
}

static bool stop_asked(struct watch_set *ws)
{
	return ws->env.stop_asked && ws->env.stop_asked(ws->env.warn_ctx);
}

/* Start row i on w, at its attach or when it waits; facts into f. */
static void source_start(struct watch_set *ws, struct watched *w, size_t i,
			 struct mt_target_facts *f, __u64 now)
{
	const struct source_ops *row = sources[i];
	struct source_slot *slot = &w->src[i];
	struct source_env env = source_env_of(ws);
	bool last;
	int e;

	if (slot->phase == SOURCE_ON || slot->phase == SOURCE_OFF)
		return;
	if (slot->phase == SOURCE_UNCHECKED)
		slot->deadline_ns = now + row->wait_s * 1000000000ULL;
	if (w->held || hold_listed(held_map(ws), w->pid)) {
		/* stopped until its probes are on (hold.h), or held with its
		 * record not read yet (on_held lets it go then): a row, which
		 * may change it or wait for it to run, starts once it runs on */
		slot->phase = SOURCE_WAITING;
		slot->retry_ns = now;
		return;
	}
	last = now >= slot->deadline_ns;
	e = row->start(&env, &(struct source_proc){ .pid = w->pid, .launched = w->launched }, last,
		       &slot->state, f);
	if (e == -EAGAIN && !last) {
		slot->phase = SOURCE_WAITING;
		slot->retry_ns = now + SOURCE_RETRY_NS;
		return;
	}
	slot->phase = slot->state ? SOURCE_ON : SOURCE_OFF;
}

/* End every row on w (its process ended, exec'd, or memtop ends). */
static void sources_stop(struct watched *w)
{
	size_t i;

	for (i = 0; i < SOURCE_ROWS; i++) {
		if (w->src[i].state)
			sources[i]->stop(w->src[i].state);
		w->src[i].state = NULL;
		if (w->src[i].phase == SOURCE_ON)
			w->src[i].phase = SOURCE_OFF;
	}
}

/* Does a row running on w see its runtime's heap (source.h)? */
static bool sources_see_runtime(const struct watched *w)
{
	size_t i;

	for (i = 0; i < SOURCE_ROWS; i++)
		if (w->src[i].phase == SOURCE_ON && sources[i]->sees_runtime)
			return true;
	return false;
}

/* What the rows running on w cost it, as a slowdown (%). */
static double sources_cost(const struct watched *w)
{
	double pct = 0;
	size_t i;

	for (i = 0; i < SOURCE_ROWS; i++)
		if (w->src[i].state && sources[i]->cost_pct)
			pct += sources[i]->cost_pct(w->src[i].state);
	return pct;
}

void watch_pump_sources(struct watch_set *ws, __u64 now_ns)
{
	struct source_env env = source_env_of(ws);
	char err[256];
	size_t k;
	int i;

	if (stop_asked(ws)) /* one poll of the signals per pass, not per target */
		return;
	for (i = 0; i < ws->n; i++) {
		struct watched *w = &ws->v[i];
		struct mt_target_facts f = { .pid = w->pid };

		if (w->gone || w->pending || !w->reported)
			continue;
		for (k = 0; k < SOURCE_ROWS; k++) {
			struct source_slot *slot = &w->src[k];

			if (slot->phase == SOURCE_WAITING && now_ns >= slot->retry_ns)
				source_start(ws, w, k, &f, now_ns);
			if (slot->phase != SOURCE_ON ||
			    !sources[k]->pump(&env, slot->state, &f, err, sizeof(err)))
				continue;
			if (target_alive(w->pid))
				watch_warn(ws, "%s", err);
			sources[k]->stop(slot->state);
			slot->state = NULL;
			slot->phase = SOURCE_OFF;
		}
		if (f.set)
			watch_report(ws, &f);
	}
}

const char *watch_mechanism(const struct watched *w)
{
	return w->mech ? w->mech->name : mechanism_uprobes.name;
}

void watch_said_how(const struct watched *w, char *buf, size_t len)
{
	const struct mechanism *m = w->mech ? w->mech : &mechanism_uprobes;
	const char *extra = w->extra.alloc ? w->extra.alloc->name : NULL;

	if (m->said)
		snprintf(buf, len, "%s%s%s", m->said, extra ? " and " : "", extra ? extra : "");
	else
		snprintf(buf, len, "%s%s%s uprobes%s%s%s", w->alloc ? w->alloc->name : "allocator",
			 extra ? " and " : "", extra ? extra : "",
			 w->uprobes_why[0] ? " (not in-process: " : "", w->uprobes_why,
			 w->uprobes_why[0] ? ")" : "");
}

static void forget_program(struct watched *w);

static int attach_charged(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	struct mt_target_facts f = { .pid = w->pid,
				     .set = MT_FACT_WATCHED | MT_FACT_COMM | MT_FACT_HOW |
					    MT_FACT_EXACT | MT_FACT_SLOWDOWN | MT_FACT_PHASE,
				     .watched_ns = clock_mono_ns() };
	struct mt_target_facts *t = &f;
	struct strpool_budget *names;
	size_t k;
	int e = bpf_loader_add_target(ws->env.bpf, w->pid);

	if (e) {
		snprintf(err, errlen, "cannot watch PID %d: %s", w->pid, strerror(-e));
		return e;
	}
	/* a running process's break, for the mmap source's brk records (a
	 * command's is learnt at its first brk after the exec) */
	if (!w->launched) {
		__u64 brk;

		if (!target_brk(w->pid, &brk))
			bpf_loader_set_brk(ws->env.bpf, w->pid, brk);
	}
	e = w->mech->attach(ws, w, err, errlen);
	/* a running process that exec'd since it was prepared (its
	 * allocator's mapping is gone): prepared again for its new program,
	 * once */
	if (e && !w->launched && target_compare(w->pid, &w->id) == TARGET_EXECED) {
		w->mech->release(ws, w);
		forget_program(w);
		if (!prepare_running(ws, w, err, errlen))
			e = w->mech->attach(ws, w, err, errlen);
	}
	if (e) {
		bpf_loader_remove_target(ws->env.bpf, w->pid);
		return e;
	}
	w->probed = true;
	/* stopped since its loader's end, its probes on now: counted from
	 * before its first allocation */
	w->held_ns = 0;
	if (w->held && hold_check(held_map(ws), w->pid, &w->held_ns))
		t->watched_ns = w->held_ns;
	if (w->extra.alloc)
		attach_extra(ws, w);
	memcpy(t->comm, w->comm, sizeof(t->comm));
	snprintf(t->allocator, sizeof(t->allocator), "%s", ws->info.allocator);
	snprintf(t->mechanism, sizeof(t->mechanism), "%s", watch_mechanism(w));
	if (w->mech->describe)
		w->mech->describe(ws, w, t);
	w->attached = ws->info; /* ws->info is the next attach's once it starts */
	set_runtime(t, w);
	if (w->mech->facts)
		w->mech->facts(ws, w, t);
	for (k = 0; k < SOURCE_ROWS; k++) /* the source table's rows (probe/source.h) */
		source_start(ws, w, k, t, clock_mono_ns());
	t->counters_exact = w->mech->counts_exact;
	t->slowdown_pct = 0;
	t->phase_seen = 1.0;
	watch_report(ws, t);
	w->reported = true;
	w->runtime_named = t->runtime[0] != '\0';
	/* the names interned for it so far move to its target's budget */
	names = ws->env.names ? ws->env.names(ws->env.warn_ctx, w->pid) : NULL;
	if (names) {
		names->bytes += w->names.bytes;
		names->refused += w->names.refused;
		w->names = (struct strpool_budget){ 0 };
		strpool_charge(names);
	}
	slowdown_init(&w->cost, ws->env.trap_ns, samples_itself(w));
	phase_share_init(&w->share);
	w->pending = false;
	return 0;
}

static int attach_watched(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	struct strpool_budget *was = charge_to(ws, w);
	int e = exited_meanwhile(w, attach_charged(ws, w, err, errlen), err, errlen);

	strpool_charge(was);
	return e;
}

static void release(struct watch_set *ws, struct watched *w)
{
	sources_stop(w);
	if (w->mech)
		w->mech->release(ws, w);
	w->probed = false;
	bpf_loader_remove_target(ws->env.bpf, w->pid);
	if (ws->env.unw)
		unwinder_forget(ws->env.unw, w->pid);
	python_names_forget(ws->env.py, w->pid);
	proc_cache_forget(ws->env.pc, w->pid);
}

/* ---- newcomers held at their start (hold.h) ------------------------------------ */

/* From now on the programs the followed processes exec are held at their
 * loader's end, and in a cgroup the children that processes on uprobes
 * fork before they run, under a guard; without one they are counted from
 * when memtop finds them, as said. */
static void start_holding(struct watch_set *ws)
{
	char err[256];
	int e;

	if (ws->env.cfg->no_hold)
		return;
	e = hold_guard_start(&ws->hold, held_map(ws), err, sizeof(err));
	if (!e) {
		/* forks only in a cgroup: -- CMD's family shares its preloaded
		 * sampler with its children */
		e = bpf_loader_hold_newcomers(
			ws->env.bpf, MT_HOLD_EXEC | (ws->cgroup_fd >= 0 ? MT_HOLD_FORK : 0));
		if (e) {
			snprintf(err, sizeof(err), "%s", strerror(-e));
			hold_guard_stop(&ws->hold);
		}
	}
	if (e)
		watch_warn(ws,
			   "new processes are not held at their start (%s): counted from when memtop finds them",
			   err);
	else
		ws->holding = true;
}

/* No more holds: the ones there are let go. */
static void stop_holding(struct watch_set *ws)
{
	if (!ws->holding)
		return;
	bpf_loader_hold_newcomers(ws->env.bpf, 0);
	hold_release_older(held_map(ws), 0, sysconf(_SC_CLK_TCK));
	hold_guard_stop(&ws->hold);
	ws->holding = false;
}

/* The guard must run while anything may be held: if it ended, memtop
 * holds no more. Newcomers past the holds' budget are said, once. */
static void check_guard(struct watch_set *ws)
{
	pid_t was = ws->hold.pid;

	if (!ws->holding)
		return;
	if (!ws->holds_over_said && bpf_loader_holds_over_budget(ws->env.bpf)) {
		ws->holds_over_said = true;
		watch_warn(ws,
			   "more than %d new processes a second: those over it are not held at their start, counted from when memtop finds them",
			   MT_HOLDS_PER_S);
	}
	if (hold_guard_alive(&ws->hold))
		return;
	stop_holding(ws);
	watch_warn(ws,
		   "the hold guard (PID %d) ended: new processes are counted from when memtop finds them",
		   was);
}

/* pid was held at its start: it waits for its attach, unless memtop has
 * nothing to attach (then it goes at once). */
static bool on_held(struct watch_set *ws, pid_t pid)
{
	struct watched *w = find(ws, pid);

	if (!w && watch_on_proc(ws, pid, MT_PROC_EXEC)) /* its fork's or exec's record lost */
		w = find(ws, pid);
	if (!w || !w->pending || w->gone || !ws->holding) {
		/* attached already, or refused; or held as memtop stopped
		 * holding: the map outlives that */
		hold_release(held_map(ws), pid, NULL);
		return false;
	}
	w->held = true;
	return true;
}

/* After w's attach (or its failure): it runs on. What is said of its hold
 * into words (empty when it was not held). */
static void let_go(struct watch_set *ws, struct watched *w, char *words, size_t len)
{
	words[0] = '\0';
	if (!w->held)
		return;
	w->held = false;
	hold_release(held_map(ws), w->pid, &w->held_parent);
	if (w->held_ns)
		snprintf(words, len, "; held %.1f ms at its start: counted from its first allocation",
			 (double)(clock_mono_ns() - w->held_ns) / 1e6);
	else
		snprintf(words, len,
			 "; not held through its attach (its guard let it go, or it was continued): counted from then");
}

int watch_attach(struct watch_set *ws, char *err, size_t errlen)
{
	int i, e;

	for (i = 0; i < ws->n; i++) {
		if (ws->v[i].pending || ws->v[i].gone)
			continue; /* a command to be injected once it runs; a
				   * process of the cgroup already refused */
		e = attach_watched(ws, &ws->v[i], err, errlen);
		if (!e)
			continue;
		if (ws->cgroup_fd < 0 || e == -ENOMEM) {
			for (; i >= 0; i--)
				release(ws, &ws->v[i]);
			return e;
		}
		/* --cgroup: one process that cannot be probed ends nothing;
		 * it stays in the set, said once, never taken again */
		watch_warn(ws, "%s: not watched", err);
		release(ws, &ws->v[i]); /* a sampler injected meanwhile goes too */
		ws->v[i].gone = true;
	}
	/* the mmap source: anonymous mappings of every watched process */
	e = bpf_loader_follow_mmap(ws->env.bpf);
	if (e)
		watch_warn(ws, "anonymous mappings are not followed (mmap source: %s)", strerror(-e));
	if (ws->cgroup_fd >= 0 || ws->launch.pid > 0) {
		/* --cgroup: its new processes; -- CMD: the command's descendants */
		e = ws->cgroup_fd >= 0 ? bpf_loader_follow_cgroup(ws->env.bpf, ws->cgroup_fd)
				       : bpf_loader_follow_family(ws->env.bpf, ws->launch.pid);
		if (e) {
			snprintf(err, errlen, "cannot follow new processes of %s: %s",
				 ws->cgroup_fd >= 0 ? ws->cgroup_dir : ws->env.cfg->cmd_argv[0],
				 strerror(-e));
			for (i = 0; i < ws->n; i++)
				release(ws, &ws->v[i]);
			return e;
		}
		start_holding(ws);
	}
	return 0;
}

int watch_release_command(struct watch_set *ws, char *err, size_t errlen)
{
	int e;

	if (ws->launch.pid <= 0 || ws->launch.go_fd < 0)
		return 0;
	e = target_release(&ws->launch, err, errlen);
	if (!e)
		return 0;
	if (ws->n)
		ws->v[0].gone = true; /* reaped by target_release */
	/* the command never ran: a log memtop made for it holds nothing */
	if (ws->launch.log_created)
		unlink(ws->launch.log_path);
	ws->launch.log_path[0] = '\0';
	return e;
}

/* ---- following a cgroup ------------------------------------------------------ */

/* After an exec, once release() has let go of what memtop held in the
 * old program: what memtop learnt of that program goes too, so the new
 * one is looked at afresh (a shell that execs java, python3 or a Go
 * binary: its runtime, its allocator, every source row). What belongs to
 * the process stays: its identity, how it is watched (launched, joined),
 * its cost and its limits so far. */
static void forget_program(struct watched *w)
{
	w->lib[0] = '\0';
	w->mech = NULL;
	memset(&w->gt, 0, sizeof(w->gt));
	w->runtime_named = false;
	w->runtime_checks = 0;
	w->inj_counts = (struct mt_inject_counts){ 0 };
	w->uprobes_why[0] = '\0';
	w->alloc = NULL;
	w->alloc_prefix[0] = '\0';
	w->extra = (struct alloc_target){ 0 };
	memset(w->src, 0, sizeof(w->src)); /* stopped by release(): unchecked again */
}

/* Does the PID of w, gone (ended, or refused once), now belong to
 * another process (another start time)? A PID is reused once its process
 * is reaped; in a cgroup the new process is watched as any newcomer. */
static bool pid_reused(const struct watched *w)
{
	struct target_id now;

	return w->id.start_ticks && !target_identity(w->pid, &now) &&
	       now.start_ticks != w->id.start_ticks;
}

bool watch_on_proc(struct watch_set *ws, pid_t pid, __u32 what)
{
	struct watched *w;

	if (what == MT_PROC_HELD)
		return on_held(ws, pid);
	w = find(ws, pid);

	if (w && w->gone) {
		if (ws->cgroup_fd < 0 || !pid_reused(w))
			return false;
		/* released when it went: nothing of the old process is left */
		memset(w, 0, sizeof(*w));
		w->pid = pid;
	} else if (w && what == MT_PROC_EXEC) {
		/* a new program: its old allocations and addresses are gone */
		release(ws, w);
		forget_program(w);
		if (ws->env.dropped)
			ws->env.dropped(ws->env.warn_ctx, pid);
	} else if (w) {
		return false;
	} else {
		w = add(ws, pid);
		if (!w)
			return false;
	}
	if (!w->id.start_ticks) {
		/* a newcomer: which process, so that a refusal keeps it gone,
		 * not its PID */
		w->joined = ws->cgroup_fd >= 0;
		target_identity(pid, &w->id);
	}
	/* counted from the moment it is found (the handover) */
	w->hand_over = ws->cgroup_fd >= 0;
	w->pending = true;
	w->pending_since_ns = clock_mono_ns();
	return true;
}

bool watch_rescan_cgroup(struct watch_set *ws)
{
	pid_t *pids = NULL, me = getpid();
	bool added = false;
	int n, i;

	if (ws->cgroup_fd < 0)
		return false;
	n = cgroup_pids(ws->cgroup_dir, &pids);
	for (i = 0; i < n; i++) {
		const struct watched *w = find(ws, pids[i]);

		/* unseen, or gone and maybe its PID reused (watch_on_proc) */
		if (pids[i] != me && (!w || w->gone))
			added |= watch_on_proc(ws, pids[i], MT_PROC_FORK);
	}
	free(pids);
	return added;
}

static void report_end(struct watch_set *ws, struct watched *w, int reaped, __u64 now_ns);

/* Is the command memtop started running its own program, its objects
 * mapped by the loader (inject_got.h)? Before its exec it is a copy of
 * memtop, whose own loader is long done. */
static bool command_loaded(const struct watch_set *ws, const struct watched *w)
{
	char path[64];
	struct stat mine, its;

	if (ws->launch.go_fd >= 0)
		return false; /* still held before its exec */
	snprintf(path, sizeof(path), "/proc/%d/exe", w->pid);
	if (stat("/proc/self/exe", &mine) || stat(path, &its) ||
	    (mine.st_dev == its.st_dev && mine.st_ino == its.st_ino))
		return false;
	return inject_got_loader_done(w->pid) == 0;
}

/* The command (memtop's child) ended while waiting to be attached: before
 * its sampler went in (a short one), or after an exec: it is a target all
 * the same, with how it ended, and reaped. */
static bool command_ended_early(struct watch_set *ws, struct watched *w, __u64 now_ns)
{
	struct mt_target_facts f = { .pid = w->pid,
				     .set = MT_FACT_WATCHED | MT_FACT_COMM,
				     .watched_ns = now_ns };
	int st;

	if (waitpid(w->pid, &st, WNOHANG) != w->pid)
		return false;
	w->pending = false;
	w->inject_at_start = false;
	w->gone = true;
	memcpy(f.comm, w->comm, sizeof(f.comm));
	watch_report(ws, &f);
	w->reported = true;
	report_end(ws, w, st, now_ns);
	return true;
}

bool watch_retry_pending(struct watch_set *ws, __u64 now_ns)
{
	bool left = false;
	char err[512], held[128];
	int i;

	for (i = 0; i < ws->n; i++) {
		struct watched *w = &ws->v[i];
		bool command;
		int e;

		if (!w->pending)
			continue;
		if (w->launched && command_ended_early(ws, w, now_ns))
			continue;
		if (w->inject_at_start && !command_loaded(ws, w) &&
		    now_ns - w->pending_since_ns <= PENDING_TIMEOUT_NS) {
			left = true;
			continue;
		}
		command = w->inject_at_start;
		w->inject_at_start = false;
		/* held with its record still in the ring (read after this
		 * retry when a drain ran out of time): held all the same */
		if (!w->held && hold_listed(held_map(ws), w->pid))
			w->held = true;
		e = prepare_running(ws, w, err, sizeof(err));
		if (!e)
			e = attach_watched(ws, w, err, sizeof(err));
		let_go(ws, w, held, sizeof(held)); /* whatever the attempt gave */
		if (!e && command && w->mech == &mechanism_uprobes)
			/* what the start-up line says of a running process */
			watch_warn(ws, "PID %d (%s): %s uprobes (not in-process: %s)", w->pid,
				   w->comm, w->alloc ? w->alloc->name : "allocator",
				   w->uprobes_why[0] ? w->uprobes_why : "?");
		if (!e && w->joined) {
			/* one line per process that joined the cgroup */
			w->joined = false;
			watch_warn(ws, "PID %d (%s) joined %s: watched%s", w->pid, w->comm,
				   ws->cgroup_dir, held);
		}
		if (!e)
			continue;
		if (e == -ESRCH && w->launched && !w->reported &&
		    now_ns - w->pending_since_ns <= PENDING_TIMEOUT_NS) {
			/* the command ended while memtop was preparing it: its
			 * end (and exit code) is taken when it is reaped, at
			 * this retry or the next */
			if (!command_ended_early(ws, w, now_ns))
				left = true;
			continue;
		}
		if (e == -ESRCH) {
			/* gone while waiting: an exec'd target ends here */
			if (w->reported)
				report_end(ws, w, -1, now_ns);
			w->pending = false;
			w->gone = true;
		} else if (now_ns - w->pending_since_ns > PENDING_TIMEOUT_NS) {
			/* still no glibc mapped, or it cannot be probed */
			watch_warn(ws, "%s: not watched", err);
			w->pending = false;
			w->gone = true;
		} else {
			left = true;
		}
	}
	return left;
}

/* ---- refreshing ------------------------------------------------------------- */

/* One reading of a target for its cost (slowdown.h). */
static void measure(struct watch_set *ws, struct watched *w, __u64 now, enum slowdown_state state)
{
	struct mt_proc_counters c;
	struct slowdown_reading r;
	struct mt_target_facts f = { .pid = w->pid, .set = MT_FACT_PHASE };
	__u64 cpu = target_cpu_ns(w->pid);

	if (!cpu || bpf_loader_read_counters(ws->env.bpf, w->pid, &c))
		return;
	r = (struct slowdown_reading){ .cpu_ns = cpu,
				       .hits = c.probe_hits,
				       .frees = c.free_calls,
				       .allocs = c.phased_calls,
				       .sample_ns = c.sample_ns };
	/* memtop's sampler in it: what its own path cost the calls it counted */
	if (w->mech->self_ns)
		r.self_ns = w->mech->self_ns(ws, w, c.samples);
	/* a process that samples itself has no allocation probes to switch */
	slowdown_feed(&w->cost, now, &r, samples_itself(w) ? SLOWDOWN_OFF : state);
	if (samples_itself(w))
		return;
	phase_share_feed(&w->share, now, c.phased_calls, c.free_calls, state, ws->duty);
	f.phase_seen = phase_share_ratio(&w->share);
	watch_report(ws, &f);
}

static bool measurable(const struct watched *w)
{
	return !w->gone && !w->pending && w->probed;
}

void watch_measure(struct watch_set *ws, __u64 now_ns, enum slowdown_state state)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (measurable(&ws->v[i]))
			measure(ws, &ws->v[i], now_ns, state);
}

double watch_own_uncertainty(const struct watch_set *ws)
{
	double worst = 0;
	int i;

	for (i = 0; i < ws->n; i++)
		if (measurable(&ws->v[i]))
			worst = fmax(worst, slowdown_own_uncertainty(&ws->v[i].cost));
	return worst;
}

void watch_set_duty(struct watch_set *ws, double duty)
{
	ws->duty = duty;
}

int watch_overhead(struct watch_set *ws, __u64 since_ns, __u64 max_ns, bool switched_only,
		   struct watch_cost *out)
{
	int i, e = -EAGAIN;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < ws->n; i++) {
		struct watched *w = &ws->v[i];
		struct mt_target_facts f = { .pid = w->pid, .set = MT_FACT_SLOWDOWN };
		struct slowdown_est est;

		if (!measurable(w) || (switched_only && samples_itself(w)) ||
		    slowdown_window(&w->cost, since_ns, max_ns, &est))
			continue;
		/* what the source table's rows cost it besides (a V8 agent's snapshots) */
		est.slowdown_pct += sources_cost(w);
		est.low_pct += sources_cost(w);
		est.high_pct += sources_cost(w);
		f.slowdown_pct = est.slowdown_pct;
		f.slowdown_measured = est.measured;
		f.slowdown_low_pct = est.low_pct;
		f.slowdown_high_pct = est.high_pct;
		watch_report(ws, &f);
		if (!e && est.slowdown_pct <= out->slowdown_pct)
			continue;
		e = 0;
		out->slowdown_pct = est.slowdown_pct;
		out->floor_pct = est.floor_pct;
		out->span_ns = est.span_ns;
		out->measured = est.measured;
		out->low_pct = est.low_pct;
		out->high_pct = est.high_pct;
		out->cost_ns = slowdown_cost_ns(&w->cost, &out->cost_measured);
	}
	return e;
}

void watch_note_exit(struct watch_set *ws, pid_t pid, int wstatus, __u64 at_ns)
{
	struct watched *w = find(ws, pid);

	if (!w || w->gone || w->exited)
		return;
	w->exited = true;
	w->wstatus = wstatus;
	w->exit_ns = at_ns;
}

/* w is gone: how it ended, as best known, to env.ended. */
static void report_end(struct watch_set *ws, struct watched *w, int reaped, __u64 now_ns)
{
	int wstatus = -1;
	__u64 at = now_ns;

	if (w->exited) {
		wstatus = w->wstatus;
		at = w->exit_ns;
	}
	if (reaped >= 0)
		wstatus = reaped; /* our own child: waitpid's word is final */
	else if (!w->exited && exits_zombie_status(w->pid, &wstatus))
		wstatus = -1;
	if (ws->env.ended)
		ws->env.ended(ws->env.warn_ctx, w->pid, wstatus, at);
}

bool watch_counts_switched(struct watch_set *ws, pid_t pid)
{
	const struct watched *w = find(ws, pid);

	return w && w->mech && w->mech->counts_exact && !samples_itself(w);
}

int watch_refresh(struct watch_set *ws, __u64 now_ns)
{
	int i, alive = 0;

	check_guard(ws);

	for (i = 0; i < ws->n; i++) {
		struct watched *w = &ws->v[i];
		struct mt_target_facts f = { .pid = w->pid, .set = MT_FACT_COUNTERS | MT_FACT_RATES };
		struct mt_target_facts *t = &f;
		int st, reaped = -1;
		enum target_change change;

		if (w->held_parent.pid)
			hold_parent_check(&w->held_parent);
		if (w->gone || w->pending || !w->reported)
			continue;
		/* a reused PID is another process: this one has ended */
		change = w->id.start_ticks ? target_compare(w->pid, &w->id) : TARGET_SAME;
		bpf_loader_read_counters(ws->env.bpf, w->pid, &t->counters);
		if (w->mech->counts)
			w->mech->counts(ws, w, t);
		t->rates_exact = w->mech->counts_exact; /* and the probes were on: the caller */
		watch_report(ws, t);                    /* its last counts, whatever comes next */
		t->set = 0;
		if (w->launched && waitpid(w->pid, &st, WNOHANG) == w->pid) {
			w->gone = true;
			reaped = st;
		} else if (w->exited || change == TARGET_GONE || !target_alive(w->pid)) {
			w->gone = true;
			/* reported while still exiting: reap it now, it is
			 * moments from being a zombie */
			if (w->launched && waitpid(w->pid, &st, 0) == w->pid)
				reaped = st;
		}
		if (w->gone) {
			report_end(ws, w, reaped, now_ns);
			release(ws, w);
			continue;
		}
		if (change == TARGET_EXECED) {
			/* -p on a process that exec'd: its old samples are gone,
			 * its new program is prepared (comm too) and probed */
			watch_on_proc(ws, w->pid, MT_PROC_EXEC);
			watch_retry_pending(ws, now_ns);
			alive += !w->gone;
			continue;
		}
		t->rss_bytes = target_rss(w->pid);
		proc_cache_take_limits(ws->env.pc, w->pid, &w->files_refused, &w->maps_cut);
		t->files_refused = w->files_refused;
		t->maps_cut = w->maps_cut;
		t->set |= MT_FACT_RSS | MT_FACT_FILE_LIM;
		if (w->launched && !watches_runtime(w) && !w->runtime_named &&
		    !sources_see_runtime(w) && w->runtime_checks < RUNTIME_CHECKS_LAUNCHED) {
			/* a command was attached before its exec: its runtime
			 * (libjvm.so, node) is mapped only once it runs */
			w->runtime_checks++;
			set_runtime(t, w);
			w->runtime_named = t->runtime[0] != '\0';
		}
		if (w->mech->facts)
			w->mech->facts(ws, w, t);
		watch_report(ws, t);
		if (w->mech->tend && !stop_asked(ws))
			w->mech->tend(ws, w);
		alive++;
	}
	return alive;
}

void watch_set_allocs(struct watch_set *ws, bool on)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (ws->v[i].probes && !samples_itself(&ws->v[i]))
			attach_set_allocs(ws->v[i].probes, on);
}

void watch_budget_paused(struct watch_set *ws)
{
	int i;

	for (i = 0; i < ws->n; i++) {
		const struct watched *w = &ws->v[i];
		struct mt_target_facts f = { .pid = w->pid, .set = MT_FACT_EXACT };

		/* one that ended keeps the mark it had then: a pause that
		 * began in its last step (250 ms) is not on it */
		if (w->reported && w->mech && !samples_itself(w) && !w->gone)
			watch_report(ws, &f); /* counters_exact false */
	}
}

void watch_set_frees(struct watch_set *ws, bool on)
{
	int i;

	for (i = 0; i < ws->n; i++) {
		struct watched *w = &ws->v[i];

		if (!w->probes || samples_itself(w) || !attach_set_frees(w->probes, on) || !on)
			continue;
		/* free() would stay unprobed: its probes all go, and it is
		 * attached again as after an exec */
		release(ws, w);
		w->pending = true;
		w->pending_since_ns = clock_mono_ns();
	}
}

pid_t watch_first_alive(const struct watch_set *ws)
{
	int i;

	for (i = 0; i < ws->n; i++)
		if (!ws->v[i].gone && !ws->v[i].pending)
			return ws->v[i].pid;
	return -1;
}

/* ---- teardown ------------------------------------------------------------------ */

/* -- CMD: the command and every descendant memtop followed end with it,
 * unless the user kept them (watch_keep_command). */
static void end_command(struct watch_set *ws)
{
	struct cmd_member *m;
	int i, n = 0;

	if (ws->launch.pid <= 0 || ws->keep_command)
		return;
	m = calloc(ws->n ? (size_t)ws->n : 1, sizeof(*m));
	for (i = 0; m && i < ws->n; i++) {
		const struct watched *w = &ws->v[i];

		/* -- CMD watches nothing but the command's family */
		if (!w->launched && w->pid > 0 && w->id.start_ticks)
			m[n++] = (struct cmd_member){ .pid = w->pid,
						      .start_ticks = w->id.start_ticks };
	}
	cmd_end(ws->launch.pid, m, n);
	free(m);
}

pid_t watch_keep_command(struct watch_set *ws)
{
	pid_t kept = 0;
	int i;

	for (i = 0; i < ws->n; i++) {
		struct watched *w = &ws->v[i];

		if (w->launched && !w->gone && w->pid > 0)
			kept = w->pid;
	}
	/* not stopped, not reaped: init adopts the command and its family */
	ws->keep_command = true;
	return kept;
}

void watch_fini(struct watch_set *ws)
{
	int i;

	/* probes first, so the targets stop trapping at once; every link
	 * released side by side (a grace period for all, not one each) */
	link_batch_begin();
	for (i = 0; i < ws->n; i++) {
		sources_stop(&ws->v[i]);
		if (ws->v[i].mech)
			ws->v[i].mech->release(ws, &ws->v[i]);
	}
	link_batch_end();
	stop_holding(ws);
	if (ws->launch.go_fd >= 0) {
		/* held before exec: closing the pipe makes it exit */
		close(ws->launch.go_fd);
		close(ws->launch.err_fd);
		waitpid(ws->launch.pid, NULL, 0);
		if (ws->n)
			ws->v[0].gone = true;
	}
	end_command(ws);
	if (ws->cgroup_fd >= 0)
		close(ws->cgroup_fd);
	free(ws->v);
	ws->v = NULL;
	ws->n = 0;
	ws->cap = 0;
}
