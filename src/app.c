// SPDX-License-Identifier: GPL-2.0-only
/*
 * app.c - memtop's lifecycle: prepare the targets, load the probes and
 * measure what a probe hit costs, attach, run the loop (drain events, tick
 * the model, drive the front end, keep the overhead budget), and tear
 * everything down in order on every way out.
 *
 * Setup failures print one line on stderr and leave nothing attached.
 * The loop ends on a signal (INT, TERM, HUP, QUIT), when the front end
 * asks, after -n intervals, or, in batch mode, once every target has
 * exited (after one last interval with their final numbers).
 */
#include "app.h"
#include "daemon.h"
#include "run_record.h"
#include "run_status.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "probe/overhead.h"
#include "probe/calibrate.h"
#include "probe/cgroup.h"
#include "probe/exits.h"
#include "probe/host_caps.h"
#include "probe/target.h"
#include "ui/frontend.h"
#include "ui/notices.h"
#include "model/cgroup_projection.h"
#include "model/ingest.h"
#include "stacks/python.h"
#include "record/recorder.h"
#include "record/session.h"
#include "ui/tui/settings.h"
#include "export/push.h"
#include "export/snapshots.h"
#include "model/stats.h"
#include "stacks/symbolize.h"
#include "probe/watch.h"
#include "readers/elf_file.h"
#include "util/out_queue.h"
#include "util/sanitize.h"
#include "util/strpool.h"
#include "util/clock.h"
#include "util/evloop.h"

/* The BPF side wakes the loop only when records pile up: drain at least
 * this often. */
#define DRAIN_NS 50000000ULL
#define OUTQ_FINAL_WAIT_MS 300
/* How often pending --cgroup processes are retried. */
#define PENDING_RETRY_NS 100000000ULL

struct app {
	const struct mt_config *cfg;
	struct watch_set ws;
	struct mt_bpf *bpf;
	struct ring_buffer *ring;
	struct proc_cache *pc;
	struct symbolizer *sym;
	struct unwinder *unw;
	struct mt_model *model;
	struct ingest ingest;
	struct mt_status status;
	const struct mt_frontend *fe;
	struct mt_fe_ctx fe_ctx;
	bool fe_started;
	bool budget_note_said; /* this episode's "cannot be met" is on stderr */
	int sigfd;
	__u64 drain_until;     /* CLOCK_MONOTONIC end of this pass over the ring */
	unsigned long drained; /* records taken, for the check of that end */
	bool stop;             /* INT, TERM, HUP or QUIT came before the loop ran */
	int exits_fd;          /* process-exit events (exits.h), or -1 */
	__u64 last_records;
	struct overhead overhead;
	__u64 last_tick_ns;
	__u64 last_off_ns; /* overhead_off_ns() at that tick */
	bool pending;
	__u64 next_retry_ns;
	struct cgroup_projection cgroup_fit;
	char cgroup_dir[PATH_MAX]; /* --cgroup's, or the first target's */
	char cgroup_v1_dir[PATH_MAX];
	__s64 cgroup_oom_kill_prev; /* the cgroup's oom_kill a refresh before the last; -1: unknown */
	struct snapshots snap;
	struct out_queue *outq; /* -b/--json: stdout through a writer thread */
	bool keep_command;      /* q, d: -- CMD keeps running after memtop */
	bool out_dropping;
	struct push_said push_said; /* --push: the state last said */
	struct notices notices;     /* what was said about memtop's bounds */
	struct run_record rec;      /* --record, --daemon */
	struct session *sess;       /* --daemon's socket */
	int daemon_fd;              /* --daemon: tells the waiting parent "ready"; -1 */
};

/* Batch output that may wait for a slow reader (beyond what its pipe
 * holds) before whole intervals are dropped. */
#define OUTQ_MAX_BYTES (4u << 20)
#define OUTQ_MAX_INTERVALS 32

static int verbose;

/* One "memtop: ..." line on stderr. It may carry a target's comm or
 * paths: sanitized (util/sanitize.h), so it stays one inert line. */
static void vsay(const char *fmt, va_list ap)
{
	char line[2048];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "memtop: %s\n", sanitize_inplace(line));
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* A process memtop could not watch: on stderr before the display starts,
 * in the status line after (stderr is the terminal then). */
static void on_warning(void *ctx, const char *msg)
{
	struct app *a = ctx;

	if (a->fe_started && a->fe->input_fd) {
		snprintf(a->status.message, sizeof(a->status.message), "%s", msg);
		return;
	}
	fail("%s", msg);
}

/* An exit event from the kernel: the watch set acts on it at refresh. */
static void on_exit_event(void *ctx, pid_t pid, int wstatus, __u64 at_ns)
{
	struct app *a = ctx;

	watch_note_exit(&a->ws, pid, wstatus, at_ns);
}

/* A SIGKILL: the OOM killer's if the cgroup's oom_kill count rose
 * (model/cgroup_projection.h). */
static void classify_oom(struct app *a, struct mt_target_end *e)
{
	struct cgroup_mem now;

	if (a->cgroup_dir[0] &&
	    !cgroup_read_mem(a->cgroup_dir, -1, a->cgroup_v1_dir, sizeof(a->cgroup_v1_dir), &now))
		cgroup_oom_end(&a->status.cgroup, a->cgroup_oom_kill_prev, &now, e);
}

/* A watched process ended: tell the model how, and the user. */
static void on_ended(void *ctx, pid_t pid, int wstatus, __u64 at_ns)
{
	struct app *a = ctx;
	struct mt_target_end e = { .kind = MT_END_UNKNOWN, .cg_oom_kill = -1 };
	const struct mt_target *t = model_target(a->model, pid);
	char how[160];

	if (wstatus >= 0 && WIFEXITED(wstatus)) {
		e.kind = MT_END_EXIT;
		e.code = WEXITSTATUS(wstatus);
	} else if (wstatus >= 0 && WIFSIGNALED(wstatus)) {
		e.kind = MT_END_SIGNAL;
		e.signal = WTERMSIG(wstatus);
		e.core = WCOREDUMP(wstatus);
		if (e.signal == SIGKILL)
			classify_oom(a, &e);
	}
	e.at_wall_s = clock_wall_s() - (double)(clock_mono_ns() - at_ns) / 1e9;
	model_apply(a->model, MT_INPUT_ENDED(pid, &e, at_ns));
	model_end_describe(&e, how, sizeof(how));
	snprintf(a->status.message, sizeof(a->status.message), "PID %d (%s) %s", (int)pid,
		 t ? t->comm : "?", how);
}

/* The data path's reports about a watched process, into the model by its
 * one door (watch.h). */
static void on_facts(void *ctx, const struct mt_target_facts *f)
{
	struct app *a = ctx;

	model_apply(a->model, MT_INPUT_FACTS(f));
}

static void on_dropped(void *ctx, pid_t pid)
{
	struct app *a = ctx;

	model_apply(a->model, MT_INPUT_DROP(pid));
}

static struct strpool_budget *on_names(void *ctx, pid_t pid)
{
	struct app *a = ctx;

	return a->model ? model_target_names(a->model, pid) : NULL;
}

static bool stop_wait(struct app *a, int ms);

static bool on_stop_asked(void *ctx)
{
	return stop_wait(ctx, 0);
}

/* One pass over the ring takes at most DRAIN_BUDGET_NS: libbpf consumes
 * until it has caught up, so a target that makes records faster than they
 * are unwound would otherwise keep the loop in the ring, away from signals
 * and ticks. Past it the pass stops (the record in hand is consumed) and
 * the rest waits for the next pass, one poll later. */
#define DRAIN_BUDGET_NS 50000000ULL
/* ... but for the pass before interval zero, which takes all the start-up
 * left (hundreds of samples to unwind for the first time) */
#define ZERO_DRAIN_NS 2000000000ULL

static int on_record(void *ctx, void *data, size_t size)
{
	struct app *a = ctx;

	ingest_record(&a->ingest, data, size);
	if (++a->drained % 64 == 0 && clock_mono_ns() > a->drain_until)
		return -EAGAIN;
	return 0;
}

/* A record of a source read in user space (a JVM's agent): the same
 * entry as the ring buffer's. */
static void on_source_record(void *ctx, const void *data, size_t size)
{
	struct app *a = ctx;

	ingest_record(&a->ingest, data, size);
}

static void ring_drain(struct app *a, __u64 budget_ns)
{
	a->drain_until = clock_mono_ns() + budget_ns;
	bpf_loader_ring_drain(a->ring);
}

/* A process waits to be attached: retried at once. */
static void pending_now(struct app *a)
{
	a->pending = true;
	a->next_retry_ns = clock_mono_ns();
}

static void on_proc(void *ctx, pid_t pid, __u32 what)
{
	struct app *a = ctx;

	watch_on_proc(&a->ws, pid, what);
	pending_now(a);
}

/* ---- setup ------------------------------------------------------------ */

static int prepare_targets(struct app *a)
{
	const struct mt_config *cfg = a->cfg;
	char err[512];
	int i, e = 0;

	if (cfg->cmd_argv)
		e = watch_prepare_command(&a->ws, err, sizeof(err));
	else if (cfg->cgroup)
		e = watch_prepare_cgroup(&a->ws, cfg->cgroup, err, sizeof(err));
	for (i = 0; !e && i < cfg->npids; i++)
		e = watch_prepare_pid(&a->ws, cfg->pids[i], err, sizeof(err));
	if (e)
		fail("%s", err);
	if (!e && a->ws.launch.log_path[0]) {
		a->status.cmd_log = a->ws.launch.log_path;
		snprintf(a->status.message, sizeof(a->status.message), "output of %.60s: %.400s",
			 cfg->cmd_argv ? cfg->cmd_argv[0] : "the command", a->status.cmd_log);
	}
	return e;
}

static bool take_signal(struct app *a);

/* Wait up to ms milliseconds for one of the signals memtop stops on;
 * true (and a->stop) once one came. Start-up checks it between its
 * stages and waits with it, so a signal while memtop attaches ends it
 * within one stage (the longest is one probe attach or detach). */
static bool stop_wait(struct app *a, int ms)
{
	struct pollfd p = { .fd = a->sigfd, .events = POLLIN };
	__u64 until = clock_mono_ns() + (__u64)ms * 1000000ULL;

	if (a->stop || a->sigfd < 0)
		return a->stop;
	for (;;) {
		__u64 now = clock_mono_ns();
		int left = now >= until ? 0 : (int)((until - now) / 1000000ULL);

		if (poll(&p, 1, left) > 0 && take_signal(a))
			return a->stop = true;
		if (left == 0)
			return false;
	}
}

static int load_probes(struct app *a)
{
	const struct mt_config *cfg = a->cfg;
	struct mt_bpf_opts opts = {
		.rate = cfg->rate,
		.stack_copy = cfg->stack_copy,
		.live_max = cfg->live_max,
		.session = cfg->probe_mode != MT_PROBE_URETPROBE && host_has_uprobe_session(),
	};
	char err[512];

	if (cfg->probe_mode == MT_PROBE_SESSION && !opts.session) {
		fail("--probe-mode session: this kernel has no uprobe sessions (Linux 6.13 or later)");
		return -ENOTSUP;
	}
	a->bpf = bpf_loader_open(&opts, err, sizeof(err));
	if (!a->bpf) {
		fail("%s", err);
		return -errno;
	}
	if (cfg->probe_mode == MT_PROBE_SESSION && !bpf_loader_has_session(a->bpf)) {
		fail("--probe-mode session: the session program did not load on this kernel");
		return -ENOTSUP;
	}
	if (stop_wait(a, 0)) /* the calibration attaches and detaches a probe */
		return 0;
	a->status.trap_ns = calibrate_trap_ns(a->bpf);
	if (a->status.trap_ns <= 0) {
		/* not fatal: costs are then shown from the documented floor */
		if (verbose)
			fail("calibration failed (%s): assuming 700 ns per probe hit",
			     strerror((int)-a->status.trap_ns));
		a->status.trap_ns = 700;
	}
	return 0;
}

static int start_data_path(struct app *a)
{
	struct mt_model_opts mo = {
		.rate = a->cfg->rate,
		.group = a->cfg->group,
		.skip_regex = a->cfg->skip_regex,
		.max_stacks = a->cfg->max_stacks,
	};

	a->model = model_new(&mo);
	a->pc = proc_cache_new();
	a->sym = a->pc ? symbolizer_new(a->pc) : NULL;
	if (!a->model || !a->sym) {
		fail("cannot set up: %s", strerror(errno));
		return -ENOMEM;
	}
	run_record_watch(&a->rec, a->model); /* before the first target */
	if (a->cfg->stack_copy)
		a->unw = unwinder_new(a->pc);
	a->ingest.model = a->model;
	a->ingest.sym = a->sym;
	a->ingest.unw = a->unw;
	a->ingest.pc = a->pc;
	a->ingest.py = python_names_new(); /* NULL: Python frames stay unmerged */
	a->ingest.on_proc = on_proc;
	a->ingest.proc_ctx = a;
	a->ws.env.bpf = a->bpf;
	a->ws.env.pc = a->pc;
	a->ws.env.unw = a->unw;
	a->ws.env.py = a->ingest.py;
	a->ws.env.trap_ns = a->status.trap_ns;
	a->ws.env.record = on_source_record; /* user-space sources (docs/java.md) */
	a->ws.env.record_ctx = a;
	return 0;
}

static int attach_targets(struct app *a)
{
	char err[512];
	int e = watch_attach(&a->ws, err, sizeof(err));

	if (e) {
		fail("%s", err);
		return e;
	}
	a->status.probe_mode = attach_mode_name(a->ws.info.mode);
	a->status.cgroup.on = a->ws.cgroup_fd >= 0;
	a->status.cgroup.path = a->cgroup_dir;
	if (a->status.cgroup.on) {
		snprintf(a->cgroup_dir, sizeof(a->cgroup_dir), "%s", a->ws.cgroup_dir);
	} else {
		/* -p / -- CMD: the limit the first target lives under, for the
		 * headers; not an error when there is none */
		char root[PATH_MAX];
		pid_t pid = watch_first_alive(&a->ws);

		if (pid <= 0 || cgroup_v2_root(root, sizeof(root), err, sizeof(err)) ||
		    cgroup_of_pid(pid, root, a->cgroup_dir, sizeof(a->cgroup_dir)))
			a->cgroup_dir[0] = '\0';
	}
	return 0;
}

static int open_ring(struct app *a)
{
	a->ring = bpf_loader_ring(a->bpf, on_record, a);
	if (!a->ring) {
		fail("cannot open the event ring buffer: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int release_command(struct app *a)
{
	char err[512];
	int e = watch_release_command(&a->ws, err, sizeof(err));

	if (e) {
		fail("%s", err);
		a->status.cmd_log = NULL; /* removed: the command never ran */
	}
	return e;
}

static int block_signals(struct app *a)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGQUIT);
	if (a->cfg->daemon)
		signal(SIGHUP, SIG_IGN); /* a session outlives terminals */
	else
		sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return a->sigfd < 0 ? -errno : 0;
}

/* ---- the overhead budget ------------------------------------------------- */

/* The overhead controller's port (probe/overhead.h): the watch set, the
 * BPF program's phase, and the model for the counts it makes inexact. */
static __u64 port_now(void *ctx)
{
	(void)ctx;
	return clock_mono_ns();
}

static void port_measure(void *ctx, __u64 now, enum slowdown_state state)
{
	watch_measure(&((struct app *)ctx)->ws, now, state);
}

static void port_set_allocs(void *ctx, bool on)
{
	watch_set_allocs(&((struct app *)ctx)->ws, on);
}

static void port_set_frees(void *ctx, bool on)
{
	watch_set_frees(&((struct app *)ctx)->ws, on);
}

static void port_set_phase(void *ctx, __u64 rate, double duty, bool on)
{
	bpf_loader_set_phase(((struct app *)ctx)->bpf, rate, duty, on);
}

static void port_set_count_only(void *ctx, bool on)
{
	bpf_loader_set_count_only(((struct app *)ctx)->bpf, on);
}

static void port_set_duty(void *ctx, double duty)
{
	watch_set_duty(&((struct app *)ctx)->ws, duty);
}

static int port_cost(void *ctx, __u64 since_ns, __u64 max_ns, bool switched_only,
		     struct watch_cost *out)
{
	return watch_overhead(&((struct app *)ctx)->ws, since_ns, max_ns, switched_only, out);
}

static double port_own_uncertainty(void *ctx)
{
	return watch_own_uncertainty(&((struct app *)ctx)->ws);
}

static bool port_wait(void *ctx, int ms)
{
	return stop_wait(ctx, ms);
}

static void port_paused(void *ctx)
{
	watch_budget_paused(&((struct app *)ctx)->ws);
}

static const struct overhead_port overhead_port = {
	.now = port_now,
	.measure = port_measure,
	.set_allocs = port_set_allocs,
	.set_frees = port_set_frees,
	.set_phase = port_set_phase,
	.set_count_only = port_set_count_only,
	.set_duty = port_set_duty,
	.cost = port_cost,
	.own_uncertainty = port_own_uncertainty,
	.wait = port_wait,
	.paused = port_paused,
};

static void overhead_start(struct app *a)
{
	struct overhead_port port = overhead_port;

	port.ctx = a;
	overhead_init(&a->overhead, &port, a->cfg->rate, a->cfg->max_overhead_pct,
		      clock_mono_ns() ^ (__u64)getpid() << 32, &a->status);
	/* processes that already run have their cost from the first interval */
	if (!a->cfg->cmd_argv && a->ws.n)
		overhead_measure_unprobed(&a->overhead);
}

/* ---- the loop ------------------------------------------------------------- */

/* The cgroup's memory, and when it reaches its limit at the current pace. */
static void cgroup_tick(struct app *a, __u64 now)
{
	struct mt_cgroup_status *cg = &a->status.cgroup;

	if (!a->cgroup_dir[0])
		return;
	a->cgroup_oom_kill_prev = cg->have_mem ? cg->mem.oom_kill : -1;
	cg->have_mem = !cgroup_read_mem(a->cgroup_dir, watch_first_alive(&a->ws), a->cgroup_v1_dir,
					sizeof(a->cgroup_v1_dir), &cg->mem);
	if (cg->have_mem)
		cgroup_projection_add(&a->cgroup_fit, now / 1e9, cg);
}

static void update_status(struct app *a, int alive)
{
	struct run_status_in in = { .ever_paused = overhead_ever_paused(&a->overhead),
				    .records = a->ingest.records - a->last_records,
				    .alive = alive,
				    .pending = a->pending };

	run_status_refresh(&a->status, a->model, &in);
	a->last_records = a->ingest.records;
}

static void read_drops(struct app *a)
{
	__u64 drops[MT_DROP_COUNT];
	struct mt_drops d = { 0 };

	bpf_loader_read_drops(a->bpf, drops);
	d.events_lost = drops[MT_DROP_RINGBUF];
	d.live_map_full = drops[MT_DROP_LIVE_FULL];
	d.pending_full = drops[MT_DROP_PENDING_FULL];
	model_apply(a->model, MT_INPUT_DROPS(&d));
}

/* Per-interval rates are exact when the allocation probes were on for
 * the whole interval, even after a back-off (counters_exact is not): the
 * interval about to close was not for the processes they count, when
 * they were off during it, and the share of it they were off goes with
 * it (the model scales the counts by the rest). */
static void mark_rates(struct app *a, __u64 now)
{
	bool on = overhead_on_since(&a->overhead, a->last_tick_ns);
	__u64 off = overhead_off_ns(&a->overhead, now);
	double off_share = 0; /* unknown for the first interval: as the counts say */
	size_t i;

	if (a->last_tick_ns && now > a->last_tick_ns && off >= a->last_off_ns)
		off_share = fmin((double)(off - a->last_off_ns) / (double)(now - a->last_tick_ns), 1);
	a->last_tick_ns = now;
	a->last_off_ns = off;
	if (on)
		return;
	for (i = 0; i < model_target_count(a->model); i++) {
		struct mt_target_facts f = { .pid = model_target_at(a->model, i)->pid,
					     .set = MT_FACT_RATES,
					     .rates_off_share = off_share };

		/* a sampler in the process counted every call of it, or
		 * nothing is counted (its rates are its samples') */
		if (!watch_counts_switched(&a->ws, f.pid))
			continue;
		model_apply(a->model, MT_INPUT_FACTS(&f));
	}
}

/* A note for the user: on stderr unless the TUI owns the terminal, and as
 * the status note, which -b prints and the TUI shows. */
static void notice(struct app *a, const char *line)
{
	if (!a->fe->input_fd)
		say("%s", line);
	snprintf(a->status.message, sizeof(a->status.message), "%s", line);
}

/* --push failing, failing differently, or working again: said once per
 * change, not once per attempt. */
static void push_notice(struct app *a)
{
	char line[sizeof(a->status.message)];

	if (a->status.push_on &&
	    push_state_change(&a->status.push, a->cfg->push_url, &a->push_said, line, sizeof(line)))
		notice(a, line);
}

/* What memtop says once about its own bounds (ui/notices.h). */
static void bounds_notices(struct app *a)
{
	char line[sizeof(a->status.message)];

	if (notice_elf_limits(&a->notices, elf_file_limits_hit(), line, sizeof(line)))
		notice(a, line);
	if (notice_target_limits(&a->notices, a->model, a->cfg->max_stacks, line, sizeof(line)))
		notice(a, line);
	if (notice_pool(&a->notices, strpool_refused(), line, sizeof(line)))
		notice(a, line);
}

/* Say once per change that the reader of -b/--json output stopped
 * reading, and when it reads again. */
static void batch_notice(struct app *a)
{
	bool dropping;
	unsigned long n = out_queue_dropped(a->outq, &dropping);

	if (dropping == a->out_dropping)
		return;
	a->out_dropping = dropping;
	if (dropping)
		say("stdout is not being read: dropping output intervals (probes and ring draining go on)");
	else
		say("stdout is read again: %lu intervals of output were dropped", n);
	snprintf(a->status.message, sizeof(a->status.message),
		 "%lu intervals of output dropped: stdout was not read", n);
}

/* The front end's interval. Batch output is written into memory and
 * queued for the writer thread, so a reader that stalls never blocks
 * this loop; a reader that is gone (EPIPE) ends memtop like q would. */
static int batch_tick(struct app *a)
{
	FILE *real = stdout, *f;
	int act;

	if (!a->outq || !(f = out_queue_begin(a->outq)))
		return a->fe->tick(&a->fe_ctx);
	stdout = f;
	act = a->fe->tick(&a->fe_ctx);
	stdout = real;
	out_queue_end(a->outq, f);
	batch_notice(a);
	return out_queue_closed(a->outq) ? act | MT_FE_QUIT : act;
}

static void note_wall_clock(struct app *a)
{
	a->status.wall_s = clock_wall_s();
}

/* The interval as the front end is about to show it, into the recording
 * and to the session's viewers. */
static void record_interval(struct app *a, bool quiet)
{
	char line[sizeof(a->status.message)];

	run_record_interval(&a->rec, a->model, &a->status, quiet);
	session_publish(a->sess);
	while (run_record_news(&a->rec, line, sizeof(line)))
		notice(a, line);
}

static int tick(struct app *a)
{
	__u64 now;
	int alive;

	ring_drain(a, DRAIN_BUDGET_NS);
	if (watch_rescan_cgroup(&a->ws))
		pending_now(a);
	now = clock_mono_ns();
	note_wall_clock(a); /* the record's time is the tick's: a refresh that
			     * releases a process can take a grace period */
	alive = watch_refresh(&a->ws, now);
	read_drops(a);
	mark_rates(a, now);
	model_apply(a->model, MT_INPUT_TICK(now));
	update_status(a, alive);
	cgroup_tick(a, now);
	snapshots_tick(&a->snap, a->model, now, &a->status);
	push_notice(a);
	bounds_notices(a);
	record_interval(a, false);
	return batch_tick(a);
}

static bool take_signal(struct app *a)
{
	struct signalfd_siginfo si;

	return read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si);
}

/* ---- the main loop ---------------------------------------------------------
 *
 * One event loop (util/evloop.h) with what the run waits on: the exit
 * events, the ring, the signals, the display's keys; the overhead
 * controller's next step, the retry of processes not ready yet, the
 * interval's tick, and a wake every DRAIN_NS. Every pass, after the ready
 * descriptors, drains the ring and pumps the sources that stream in user
 * space (the JVMs' agents). */

struct run {
	struct app *a;
	struct evloop loop;
	int t_overhead, t_pending, t_tick, t_wake;
	__u64 next_tick; /* the interval's cadence: each one period after the last */
	long ticks;
};

/* What a display or a tick asked for. */
static void run_act(struct run *r, int act, __u64 now)
{
	struct app *a = r->a;

	if (act & MT_FE_DETACH)
		a->keep_command = true;
	if ((act & MT_FE_QUIT) || a->stop)
		evloop_stop(&r->loop, 0);
	if (act & MT_FE_INTERVAL) {
		r->next_tick = now + (__u64)(a->fe_ctx.interval_s * 1e9);
		evloop_timer_at(&r->loop, r->t_tick, r->next_tick);
	}
}

static void on_exits_ready(struct evloop *l, void *ctx, short revents)
{
	struct app *a = ((struct run *)ctx)->a;

	(void)l;
	(void)revents;
	exits_read(a->exits_fd, on_exit_event, a); /* missed ones: refresh finds them */
}

static void on_signal_ready(struct evloop *l, void *ctx, short revents)
{
	(void)revents;
	if (take_signal(((struct run *)ctx)->a))
		evloop_stop(l, 0);
}

static void on_input_ready(struct evloop *l, void *ctx, short revents)
{
	struct run *r = ctx;
	struct app *a = r->a;

	(void)revents;
	run_act(r, a->fe->input(&a->fe_ctx), l->sys.now_ns(l->sys.ctx));
}

static void on_overhead_due(struct evloop *l, void *ctx, __u64 now)
{
	struct app *a = ((struct run *)ctx)->a;
	bool noted;

	(void)l;
	overhead_run(&a->overhead, now, &a->status);
	/* the budget's "cannot be met" on stderr too, once an episode: with
	 * -b > file it is otherwise only in the file (the screen's header
	 * shows it) */
	noted = a->status.budget_note[0] != '\0';
	if (noted && !a->budget_note_said && !a->fe->input_fd)
		on_warning(a, a->status.budget_note);
	a->budget_note_said = noted;
}

static void on_retry_due(struct evloop *l, void *ctx, __u64 now)
{
	struct app *a = ((struct run *)ctx)->a;

	(void)l;
	a->pending = watch_retry_pending(&a->ws, now);
	a->next_retry_ns = now + PENDING_RETRY_NS;
	/* a command injected once it ran has its mode now */
	if (a->cfg->cmd_argv)
		a->status.probe_mode = attach_mode_name(a->ws.info.mode);
}

static void on_tick_due(struct evloop *l, void *ctx, __u64 now)
{
	struct run *r = ctx;
	struct app *a = r->a;
	int act = tick(a);
	__u64 period = (__u64)(a->fe_ctx.interval_s * 1e9);

	r->ticks++;
	r->next_tick += period;
	now = l->sys.now_ns(l->sys.ctx);
	if (r->next_tick < now) /* late: the cadence starts again from now */
		r->next_tick = now + period;
	evloop_timer_at(l, r->t_tick, r->next_tick);
	if ((a->cfg->count > 0 && r->ticks >= a->cfg->count) ||
	    (a->status.all_exited && !a->fe->input_fd)) {
		evloop_stop(l, 0);
		return;
	}
	run_act(r, act, now);
}

static void run_before_wait(struct evloop *l, void *ctx, __u64 now)
{
	struct run *r = ctx;
	struct app *a = r->a;

	evloop_timer_at(l, r->t_overhead, overhead_next_ns(&a->overhead));
	evloop_timer_at(l, r->t_pending, a->pending ? a->next_retry_ns : EVLOOP_NEVER);
	evloop_timer_at(l, r->t_wake, now + DRAIN_NS);
}

static void run_each_pass(struct evloop *l, void *ctx, __u64 now)
{
	struct app *a = ((struct run *)ctx)->a;

	ring_drain(a, DRAIN_BUDGET_NS);
	watch_pump_sources(&a->ws, now); /* the JVMs' agents */
	if (a->stop) /* a refresh cut its work short for a signal (on_stop_asked) */
		evloop_stop(l, 0);
}

static int run_loop(struct app *a)
{
	struct run r = { .a = a };
	struct evloop *l = &r.loop;

	if (a->stop) /* during the unprobed measure */
		return 0;
	evloop_init(l, NULL);
	/* the order a pass serves them in: exits before the ring's records */
	evloop_add_fd(l, a->exits_fd, on_exits_ready, &r);
	/* the ring only wakes the loop: every pass drains it */
	evloop_add_fd(l, bpf_loader_ring_fd(a->ring), NULL, NULL);
	evloop_add_fd(l, a->sigfd, on_signal_ready, &r);
	evloop_add_fd(l, a->fe->input_fd ? a->fe->input_fd(&a->fe_ctx) : -1, on_input_ready, &r);
	r.t_overhead = evloop_add_timer(l, on_overhead_due, &r);
	r.t_pending = evloop_add_timer(l, on_retry_due, &r);
	r.t_tick = evloop_add_timer(l, on_tick_due, &r);
	r.t_wake = evloop_add_timer(l, NULL, NULL); /* at least every DRAIN_NS */
	evloop_hooks(l, run_before_wait, run_each_pass, &r);
	r.next_tick = clock_mono_ns() + (__u64)(a->fe_ctx.interval_s * 1e9);
	evloop_timer_at(l, r.t_tick, r.next_tick);
	return evloop_run(l);
}

/* ---- teardown ------------------------------------------------------------- */

static void teardown(struct app *a)
{
	session_close(a->sess);
	a->sess = NULL;
	if (a->keep_command) {
		pid_t pid = watch_keep_command(&a->ws);

		if (pid > 0)
			say("PID %d (%s) keeps running, without probes; its output goes to %s",
			    (int)pid, a->cfg->cmd_argv[0],
			    a->status.cmd_log ? a->status.cmd_log : "?");
	}
	watch_fini(&a->ws); /* probes first: the targets stop trapping at once */
	/* then the last outputs, whose failure is the run's last word */
	snapshots_fini(&a->snap);
	if (a->fe_started)
		a->fe->stop(&a->fe_ctx);
	bpf_loader_ring_free(a->ring);
	bpf_loader_close(a->bpf);
	unwinder_free(a->unw);
	symbolizer_free(a->sym);
	python_names_free(a->ingest.py);
	proc_cache_free(a->pc);
	run_record_close(&a->rec, a->cfg);
	model_free(a->model);
	if (a->sigfd >= 0)
		close(a->sigfd);
	if (a->exits_fd >= 0)
		close(a->exits_fd);
}

static const struct mt_frontend *choose_frontend(const struct mt_config *cfg)
{
	if (cfg->daemon)
		return &frontend_none;
	if (cfg->json)
		return &frontend_json;
	if (cfg->batch)
		return &frontend_text;
	return &frontend_tui;
}

static void announce(const struct app *a)
{
	int i;

	/* each with its own probes: a cgroup's tcmalloc process is not
	 * attached as its glibc neighbour was */
	for (i = 0; i < a->ws.n; i++) {
		const struct watched *w = &a->ws.v[i];
		const struct attach_info *info = &w->attached;

		char how[256];

		if (w->inject_at_start) {
			say("started PID %d (%s): memtop's sampler goes in once its loader is done",
			    w->pid, w->comm);
			continue;
		}
		watch_said_how(w, how, sizeof(how));
		say("attached to PID %d (%s): %s, %s mode, %d probes (%d slow), %.0f ns per probe "
		    "hit: %s",
		    w->pid, w->comm, how, attach_mode_name(info->mode), info->nprobes, info->nslow,
		    a->status.trap_ns, info->detail);
	}
	if (a->status.cgroup.on)
		say("following new processes of %s", a->ws.cgroup_dir);
	if (a->status.cmd_log)
		say("the output of %s goes to %s", a->cfg->cmd_argv[0], a->status.cmd_log);
}

static void say_line(const char *line)
{
	say("%s", line);
}

static int setup(struct app *a)
{
	char err[512];
	int e;

	if (!host_has_bpf_privileges()) {
		fail("memtop needs root, or the CAP_BPF and CAP_PERFMON capabilities, to load its probes");
		return -EPERM;
	}
	/* a namespace's PIDs are not the ones the probes report */
	e = target_check_pid_namespace(err, sizeof(err));
	if (e) {
		fail("%s", err);
		return e;
	}
	/* first: a signal from here on ends memtop through teardown, which
	 * closes a recording or an export already opened */
	e = block_signals(a);
	if (e) {
		fail("cannot take its signals: %s", strerror(-e));
		return e;
	}
	e = snapshots_init(&a->snap, a->cfg, err, sizeof(err));
	if (e) {
		fail("%s", err);
		return e;
	}
	e = run_record_open(&a->rec, a->cfg, say_line, err, sizeof(err));
	if (e) {
		fail("%s", err);
		return e;
	}
	if (!stop_wait(a, 0))
		e = prepare_targets(a);
	if (!e && !stop_wait(a, 0))
		e = load_probes(a);
	if (!e && !stop_wait(a, 0))
		e = start_data_path(a);
	if (!e && !stop_wait(a, 0))
		e = attach_targets(a);
	if (!e && !stop_wait(a, 0))
		e = open_ring(a);
	if (!e) {
		/* before the command runs: its earliest death is seen too */
		a->exits_fd = exits_open();
		if (a->exits_fd < 0 && verbose)
			fail("no process-exit events (%s): how targets end is known only for a command memtop runs",
			     strerror(-a->exits_fd));
	}
	if (!e && !stop_wait(a, 0))
		e = release_command(a);
	if (!e && a->cfg->cmd_argv) {
		/* a command to be injected once its loader is done */
		pending_now(a);
	}
	return e ? e : a->stop ? -EINTR : 0;
}

/* ---- --daemon ------------------------------------------------------------------ */

/* The child, set up: listen for viewers, then let go of the terminal
 * (daemon.h). */
static int daemon_serve(struct app *a)
{
	char err[512];

	a->sess = session_open(session_run_dir(), getpid(), a->rec.rec, err, sizeof(err));
	if (!a->sess) {
		fail("%s", err);
		return -EIO;
	}
	say("recording to %s", a->rec.path);
	daemon_let_go(&a->daemon_fd);
	return 0;
}

/* -- CMD: when the command ended on its own other than with exit code 0,
 * say how and return what a shell would (its code, or 128 + the signal);
 * else 0. */
static int command_outcome(struct app *a)
{
	const struct mt_target *t;
	char how[160];

	if (!a->cfg->cmd_argv || a->ws.launch.pid <= 0)
		return 0;
	t = model_target(a->model, a->ws.launch.pid);
	if (!t || t->alive || (t->end.kind == MT_END_EXIT && t->end.code == 0))
		return 0;
	model_end_describe(&t->end, how, sizeof(how));
	fail("%s (PID %d) %s", t->comm, (int)t->pid, how);
	if (t->end.kind == MT_END_EXIT)
		return t->end.code;
	if (t->end.kind == MT_END_SIGNAL || t->end.kind == MT_END_OOM)
		return 128 + t->end.signal;
	return 1;
}

/* The settings file's inject default, unless the command line chose
 * (--inject, --no-inject) or --no-config: into *run, a copy of cfg. */
static const struct mt_config *with_settings(const struct mt_config *cfg, struct mt_config *run)
{
	struct mt_settings s;
	char path[PATH_MAX], err[PATH_MAX + 64];

	*run = *cfg;
	settings_init(&s);
	if (cfg->no_config || (cfg->given & MT_GIVEN_INJECT) || settings_path(path, sizeof(path)) ||
	    settings_load(&s, path, err, sizeof(err)) || s.inject < 0)
		return run; /* a file with an error is said by the live view */
	run->inject_mode = (enum mt_inject_mode)s.inject;
	return run;
}

/* The -p PIDs, the first question before the display's: a namespace
 * whose PIDs are not the probes', then each PID. 0, or -errno with one
 * line in err. */
static int check_pids(const struct mt_config *cfg, char *err, size_t errlen)
{
	char comm[16];
	int e;

	if (!cfg->npids)
		return 0;
	e = target_check_pid_namespace(err, errlen);
	for (int i = 0; !e && i < cfg->npids; i++)
		e = target_check(cfg->pids[i], comm, err, errlen);
	return e;
}

int app_run(const struct mt_config *given)
{
	struct mt_config run_cfg;
	const struct mt_config *cfg = with_settings(given, &run_cfg);
	struct app a = { .cfg = cfg, .sigfd = -1, .exits_fd = -1, .daemon_fd = -1 };
	char err[512];
	int code;
	bool unwritten;
	struct watch_env env = { .cfg = cfg,
				 .warn = on_warning,
				 .warn_ctx = &a,
				 .ended = on_ended,
				 .facts = on_facts,
				 .dropped = on_dropped,
				 .names = on_names,
				 .stop_asked = on_stop_asked };
	int e;

	/* a reader of stdout or of a FIFO output that goes away is EPIPE,
	 * handled where it happens, not a signal that loses the exports */
	signal(SIGPIPE, SIG_IGN);
	verbose = cfg->verbose;
	bpf_loader_set_verbosity(verbose);
	a.fe = choose_frontend(cfg);
	if (check_pids(cfg, err, sizeof(err))) {
		fail("%s", err);
		return 1;
	}
	if (a.fe->check) { /* a display that cannot work: before attaching */
		char why[256] = "";

		if (a.fe->check(cfg, why, sizeof(why))) {
			fail("%s", why);
			return 1;
		}
	}
	if (cfg->daemon) {
		pid_t session = 0;

		e = daemon_fork(&session, &code, &a.daemon_fd, err, sizeof(err));
		if (e < 0) {
			fail("%s", err);
			return 1;
		}
		if (e > 0) { /* the parent: the session runs on in the child */
			if (!code)
				say("session %d runs in the background: memtop attach %d (socket %s/%d.sock)",
				    (int)session, (int)session, session_run_dir(), (int)session);
			return code;
		}
	}
	watch_init(&a.ws, &env);
	cgroup_projection_init(&a.cgroup_fit);
	if (a.fe->input_fd && isatty(STDERR_FILENO))
		/* the screen stays the shell's until the first draw: attaching
		 * and measuring the probes' cost take seconds on a busy machine */
		say("attaching and measuring what the probes cost...");
	e = setup(&a);
	if (e) {
		/* a stop asked for while attaching ends memtop as the loop would */
		teardown(&a);
		return e == -EINTR && a.stop ? 0 : 1;
	}
	a.cgroup_oom_kill_prev = -1;
	a.status.counters_exact = true;
	overhead_start(&a);
	announce(&a);

	a.fe_ctx.model = a.model;
	a.fe_ctx.cfg = cfg;
	a.fe_ctx.status = &a.status;
	a.fe_ctx.interval_s = cfg->interval_s;
	/* interval zero: the start line, with what was sampled while
	 * attaching and measuring, however long unwinding it takes within
	 * ZERO_DRAIN_NS (not the first interval's: with those samples in
	 * it its rates read 1.7 times the truth) */
	ring_drain(&a, ZERO_DRAIN_NS);
	model_apply(a.model, MT_INPUT_TICK(clock_mono_ns()));
	a.status.counters_exact =
		run_status_counters_exact(a.model, overhead_ever_paused(&a.overhead));
	note_wall_clock(&a);
	record_interval(&a, true);
	e = a.fe->start(&a.fe_ctx);
	if (e) {
		if (a.status.message[0])
			fail("%s", a.status.message);
		else
			fail("cannot start the %s display: %s", a.fe->name, strerror(-e));
		teardown(&a);
		return 1;
	}
	a.fe_started = true;
	if (cfg->daemon && daemon_serve(&a)) {
		teardown(&a);
		return 1;
	}
	if (!a.fe->input_fd)
		a.outq = out_queue_new(STDOUT_FILENO, OUTQ_MAX_BYTES, OUTQ_MAX_INTERVALS);
	e = run_loop(&a);
	if (e)
		fail("%s", strerror(-e));
	/* the display is still up: stop it before the final files' messages */
	a.fe->stop(&a.fe_ctx);
	a.fe_started = false;
	if (a.fe->input_fd && a.status.cmd_log && !a.keep_command)
		/* the line at the start was under the live view: again, after it */
		say("the output of %s is in %s", cfg->cmd_argv[0], a.status.cmd_log);
	/* what a live reader has not taken yet, for at most OUTQ_FINAL_WAIT_MS:
	 * a stalled one must not hold the end past a second */
	out_queue_free(a.outq, OUTQ_FINAL_WAIT_MS);
	a.outq = NULL;
	unwritten = snapshots_finish(&a.snap, a.model, err, sizeof(err)) != 0;
	code = command_outcome(&a);
	teardown(&a); /* the targets put back first, as they said so */
	if (unwritten) {
		fail("%s", err); /* the run's last word */
		e = -EIO;
	}
	return e ? 1 : code;
}
