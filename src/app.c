// SPDX-License-Identifier: GPL-2.0-only
/*
 * app.c - memtop's lifecycle: resolve the targets, load and attach the
 * probes, run the loop (drain events, tick the model, drive the front end)
 * and tear everything down in order on every way out.
 *
 * Setup failures print one line on stderr and leave nothing attached.
 * The loop ends on a signal (INT, TERM, HUP), when the front end asks,
 * after -n intervals, or once every target has exited (after one last
 * interval with their final numbers).
 */
#include "memtop/app.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>

#include "memtop/attach.h"
#include "memtop/budget.h"
#include "memtop/bpf_loader.h"
#include "memtop/calibrate.h"
#include "memtop/frontend.h"
#include "memtop/ingest.h"
#include "memtop/model.h"
#include "memtop/proc_cache.h"
#include "memtop/symbolize.h"
#include "memtop/target.h"
#include "memtop/unwind.h"
#include "memtop/usdt.h"

#ifndef MEMTOP_LIBDIR
#define MEMTOP_LIBDIR "/usr/local/lib/memtop"
#endif
#define SAMPLER_SO "libmemtop-sampler.so"

struct watched {
	pid_t pid;
	char comm[16];
	char lib[PATH_MAX]; /* glibc, or the file with otel_memory probes */
	bool usdt;	    /* the process samples itself (otel_memory USDT) */
	struct mt_probe_set *probes;
	bool launched; /* started by memtop: reaped and stopped by it */
	bool gone;
	__u64 prev_cpu_ns;
	__u64 prev_hits;
};

struct app {
	const struct mt_config *cfg;
	struct watched *w;
	int nw;
	struct mt_bpf *bpf;
	struct ring_buffer *ring;
	struct proc_cache *pc;
	struct symbolizer *sym;
	struct unwinder *unw;
	struct mt_model *model;
	struct ingest ingest;
	struct mt_status status;
	struct attach_info attach;
	const struct mt_frontend *fe;
	struct mt_fe_ctx fe_ctx;
	bool fe_started;
	int sigfd;
	__u64 last_records;
	struct budget budget;
	bool allocs_on;
	__u64 next_switch_ns;
};

static int verbose;

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("memtop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBBPF_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Uprobe sessions arrived in Linux 6.13. */
static bool kernel_has_session(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 13);
}

static int on_record(void *ctx, void *data, size_t size)
{
	ingest_record(ctx, data, size);
	return 0;
}

/* ---- setup ------------------------------------------------------------ */

/* The in-process sampler: next to memtop's binary (a build tree), else
 * where `make install` puts it. 0 or -ENOENT. */
static int find_sampler(char *path, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash && (size_t)(slash - exe) + sizeof(SAMPLER_SO) + 1 < len) {
			memcpy(path, exe, slash - exe + 1);
			strcpy(path + (slash - exe) + 1, SAMPLER_SO);
			if (!access(path, R_OK))
				return 0;
		}
	}
	snprintf(path, len, "%s/%s", MEMTOP_LIBDIR, SAMPLER_SO);
	return access(path, R_OK) ? -ENOENT : 0;
}

/* Launch -- CMD, with the in-process sampler unless --no-preload. */
static int launch_command(struct app *a, struct launched *l)
{
	const struct mt_config *cfg = a->cfg;
	struct watched *w = &a->w[0];
	char sampler[PATH_MAX], err[512];
	bool preload = !cfg->no_preload && cfg->probe_mode == MT_PROBE_AUTO;
	int e;

	if (preload && find_sampler(sampler, sizeof(sampler))) {
		fprintf(stderr, "memtop: %s not found: probing glibc's allocator instead\n",
			SAMPLER_SO);
		preload = false;
	}
	e = target_launch(cfg->cmd_argv, preload ? sampler : NULL, cfg->rate, l, w->lib,
			  sizeof(w->lib), err, sizeof(err));
	if (e) {
		fail("%s", err);
		return e;
	}
	if (preload) {
		snprintf(w->lib, sizeof(w->lib), "%s", sampler);
		w->usdt = true;
	}
	return 0;
}

static int resolve_targets(struct app *a, struct launched *l)
{
	const struct mt_config *cfg = a->cfg;
	char err[512];
	int i, e;

	a->w = calloc(cfg->npids ? cfg->npids : 1, sizeof(*a->w));
	if (!a->w)
		return -ENOMEM;
	if (cfg->cmd_argv) {
		e = launch_command(a, l);
		if (e)
			return e;
		a->w[0].pid = l->pid;
		a->w[0].launched = true;
		snprintf(a->w[0].comm, sizeof(a->w[0].comm), "%s", cfg->cmd_argv[0]);
		a->nw = 1;
		return 0;
	}
	for (i = 0; i < cfg->npids; i++) {
		struct watched *w = &a->w[a->nw];

		w->pid = cfg->pids[i];
		e = target_check(w->pid, w->comm, err, sizeof(err));
		/* a process that samples itself is watched through its USDT
		 * probes, at a fraction of the cost of trapping its allocator */
		if (!e && cfg->probe_mode == MT_PROBE_AUTO &&
		    !usdt_find_in_process(w->pid, "otel_memory", w->lib, sizeof(w->lib)))
			w->usdt = true;
		else if (!e)
			e = target_find_allocator(w->pid, w->lib, sizeof(w->lib), err, sizeof(err));
		if (e) {
			fail("%s", err);
			return e;
		}
		a->nw++;
	}
	return 0;
}

static int load_probes(struct app *a)
{
	const struct mt_config *cfg = a->cfg;
	struct mt_bpf_opts opts = {
		.rate = cfg->rate,
		.stack_copy = cfg->stack_copy,
		.live_max = cfg->live_max,
		.session = cfg->probe_mode != MT_PROBE_URETPROBE && kernel_has_session(),
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

static int attach_all(struct app *a)
{
	bool session = a->cfg->probe_mode != MT_PROBE_URETPROBE;
	char err[512];
	int i, e;

	for (i = 0; i < a->nw; i++) {
		struct watched *w = &a->w[i];
		struct mt_target *t;

		e = bpf_loader_add_target(a->bpf, w->pid);
		if (e) {
			fail("cannot watch PID %d: %s", w->pid, strerror(-e));
			return e;
		}
		if (w->usdt)
			w->probes = attach_usdt(a->bpf, w->pid, w->lib, &a->attach, err, sizeof(err));
		else
			w->probes = attach_target(a->bpf, w->pid, w->lib, session, &a->attach, err,
						  sizeof(err));
		if (!w->probes) {
			e = -errno;
			fail("%s", err);
			return e ? e : -EINVAL;
		}
		t = model_target(a->model, w->pid, true);
		if (!t)
			return -ENOMEM;
		memcpy(t->comm, w->comm, sizeof(t->comm));
		t->start_ns = now_ns();
		t->counters_exact = !w->usdt;
	}
	a->status.probe_mode = attach_mode_name(a->attach.mode);
	return 0;
}

static int start_data_path(struct app *a)
{
	struct mt_model_opts mo = {
		.rate = a->cfg->rate,
		.group = a->cfg->group,
		.skip_regex = a->cfg->skip_regex,
	};

	a->model = model_new(&mo);
	a->pc = proc_cache_new();
	a->sym = a->pc ? symbolizer_new(a->pc) : NULL;
	if (!a->model || !a->sym) {
		fail("cannot set up: %s", strerror(errno));
		return -ENOMEM;
	}
	if (a->cfg->stack_copy)
		a->unw = unwinder_new(a->pc);
	a->ingest.model = a->model;
	a->ingest.sym = a->sym;
	a->ingest.unw = a->unw;
	return 0;
}

static int open_ring(struct app *a)
{
	a->ring = bpf_loader_ring(a->bpf, on_record, &a->ingest);
	if (!a->ring) {
		fail("cannot open the event ring buffer: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int block_signals(struct app *a)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return a->sigfd < 0 ? -errno : 0;
}

/* ---- the loop ----------------------------------------------------------- */

/* The slowdown the probes caused w over the last interval (budget.h). */
static void measure_overhead(struct app *a, struct watched *w, const struct mt_target *t,
			     double *worst)
{
	__u64 cpu = target_cpu_ns(w->pid), hits = t->counters.probe_hits;
	double slow;

	if (w->prev_cpu_ns && cpu > w->prev_cpu_ns) {
		slow = budget_slowdown_pct((hits - w->prev_hits) * a->status.trap_ns,
					   cpu - w->prev_cpu_ns);
		if (slow > *worst)
			*worst = slow;
	}
	w->prev_cpu_ns = cpu;
	w->prev_hits = hits;
}

/* Switch the allocation probes of every live target on or off. */
static void set_allocs(struct app *a, bool on)
{
	int i;

	for (i = 0; i < a->nw; i++)
		if (a->w[i].probes && !a->w[i].usdt && attach_set_allocs(a->w[i].probes, on) &&
		    verbose)
			fail("PID %d: cannot switch allocation probes %s", a->w[i].pid,
			     on ? "on" : "off");
	a->allocs_on = on;
}

/* Follow the budget's on/off schedule. */
static void budget_step(struct app *a, __u64 now)
{
	bool on = budget_phase(&a->budget, now, &a->next_switch_ns);

	if (on != a->allocs_on)
		set_allocs(a, on);
}

/* After each interval: adapt the duty to the measured slowdown. */
static void budget_tick(struct app *a)
{
	if (a->cfg->max_overhead_pct <= 0)
		return;
	budget_update(&a->budget, a->status.est_slowdown_pct);
	model_set_weight_scale(a->model, 1.0 / a->budget.duty);
	a->status.duty = a->budget.duty;
	a->status.backed_off = a->budget.duty < 1.0;
	a->status.counters_exact = !a->budget.ever_paused;
	if (a->budget.ever_paused) {
		size_t i;

		for (i = 0; i < model_target_count(a->model); i++)
			model_target_at(a->model, i)->counters_exact = false;
	}
}

/* Refresh each target's exact counters, RSS and liveness. */
static void refresh_targets(struct app *a)
{
	__u64 drops[MT_DROP_COUNT];
	struct mt_drops *d = model_drops(a->model);
	double worst = 0;
	int i, alive = 0;

	for (i = 0; i < a->nw; i++) {
		struct watched *w = &a->w[i];
		struct mt_target *t = model_target(a->model, w->pid, false);

		if (!t || w->gone)
			continue;
		bpf_loader_read_counters(a->bpf, w->pid, &t->counters);
		if (w->launched && waitpid(w->pid, NULL, WNOHANG) == w->pid)
			w->gone = true;
		else if (!target_alive(w->pid))
			w->gone = true;
		if (w->gone) {
			t->alive = false;
			t->exit_ns = now_ns();
			attach_detach(w->probes);
			w->probes = NULL;
			bpf_loader_remove_target(a->bpf, w->pid);
			if (a->unw)
				unwinder_forget(a->unw, w->pid);
			proc_cache_forget(a->pc, w->pid);
			continue;
		}
		t->rss_bytes = target_rss(w->pid);
		measure_overhead(a, w, t, &worst);
		alive++;
	}
	a->status.all_exited = alive == 0;
	a->status.est_slowdown_pct = worst;
	bpf_loader_read_drops(a->bpf, drops);
	d->events_lost = drops[MT_DROP_RINGBUF];
	d->live_map_full = drops[MT_DROP_LIVE_FULL];
	d->pending_full = drops[MT_DROP_PENDING_FULL];
}

static void update_status(struct app *a)
{
	double dt = model_interval_s(a->model), hits = 0;
	size_t i;

	for (i = 0; i < model_target_count(a->model); i++)
		hits += model_target_at(a->model, i)->probe_hits_per_s;
	a->status.probe_hits_per_s = hits;
	a->status.est_cpu_pct = hits * a->status.trap_ns / 1e7;
	a->status.events_per_s = dt > 0 ? (a->ingest.records - a->last_records) / dt : 0;
	a->last_records = a->ingest.records;
}

static int tick(struct app *a)
{
	ring_buffer__consume(a->ring);
	refresh_targets(a);
	model_tick(a->model, now_ns());
	update_status(a);
	budget_tick(a);
	return a->fe->tick(&a->fe_ctx);
}

static bool take_signal(struct app *a)
{
	struct signalfd_siginfo si;

	return read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si);
}

static int run_loop(struct app *a)
{
	const struct mt_config *cfg = a->cfg;
	__u64 next = now_ns() + (__u64)(a->fe_ctx.interval_s * 1e9);
	long ticks = 0;
	int ring_fd = ring_buffer__epoll_fd(a->ring);

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = ring_fd, .events = POLLIN },
			{ .fd = a->sigfd, .events = POLLIN },
			{ .fd = a->fe->input_fd ? a->fe->input_fd(&a->fe_ctx) : -1, .events = POLLIN },
		};
		__u64 t = now_ns(), wake = next < a->next_switch_ns ? next : a->next_switch_ns;
		int timeout = t >= wake ? 0 : (int)((wake - t) / 1000000) + 1;
		int act = 0;

		if (poll(pfd, 3, timeout) < 0 && errno != EINTR)
			return -errno;
		if (pfd[0].revents)
			ring_buffer__consume(a->ring);
		if (pfd[1].revents && take_signal(a))
			return 0;
		if (pfd[2].fd >= 0 && pfd[2].revents)
			act |= a->fe->input(&a->fe_ctx);
		if (now_ns() >= a->next_switch_ns)
			budget_step(a, now_ns());
		if (now_ns() >= next) {
			act |= tick(a);
			ticks++;
			next += (__u64)(a->fe_ctx.interval_s * 1e9);
			if (next < now_ns())
				next = now_ns() + (__u64)(a->fe_ctx.interval_s * 1e9);
			if (cfg->count > 0 && ticks >= cfg->count)
				return 0;
			if (a->status.all_exited && !a->fe->input_fd)
				return 0;
		}
		if (act & MT_FE_QUIT)
			return 0;
		if (act & MT_FE_INTERVAL)
			next = now_ns() + (__u64)(a->fe_ctx.interval_s * 1e9);
	}
}

/* ---- teardown ----------------------------------------------------------- */

static void stop_launched(struct watched *w)
{
	int i;

	if (!w->launched || w->gone || w->pid <= 0)
		return;
	kill(w->pid, SIGTERM);
	for (i = 0; i < 50; i++) {
		if (waitpid(w->pid, NULL, WNOHANG) == w->pid)
			return;
		usleep(20000);
	}
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
}

static void teardown(struct app *a)
{
	int i;

	/* Probes first, so the targets stop trapping at once. */
	for (i = 0; i < a->nw; i++) {
		attach_detach(a->w[i].probes);
		a->w[i].probes = NULL;
	}
	if (a->fe_started)
		a->fe->stop(&a->fe_ctx);
	for (i = 0; i < a->nw; i++)
		stop_launched(&a->w[i]);
	ring_buffer__free(a->ring);
	bpf_loader_close(a->bpf);
	unwinder_free(a->unw);
	symbolizer_free(a->sym);
	proc_cache_free(a->pc);
	model_free(a->model);
	if (a->sigfd > 0)
		close(a->sigfd);
	free(a->w);
}

static const struct mt_frontend *choose_frontend(const struct mt_config *cfg)
{
	if (cfg->json)
		return &frontend_json;
	if (cfg->batch)
		return &frontend_text;
	return &frontend_tui;
}

static void announce(const struct app *a)
{
	int i;

	for (i = 0; i < a->nw; i++)
		fprintf(stderr,
			"memtop: attached to PID %d (%s): %s mode, %d probes (%d slow), %.0f ns per probe hit: %s\n",
			a->w[i].pid, a->w[i].comm, a->status.probe_mode, a->attach.nprobes,
			a->attach.nslow, a->status.trap_ns, a->attach.detail);
}

int app_run(const struct mt_config *cfg)
{
	struct app a = { .cfg = cfg, .sigfd = -1 };
	struct launched l = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	char err[512];
	int e;

	verbose = cfg->verbose;
	libbpf_set_print(libbpf_print);
	a.fe = choose_frontend(cfg);
	if (cfg->cgroup) {
		fail("--cgroup is not supported yet");
		return 1;
	}
	e = block_signals(&a);
	if (!e)
		e = resolve_targets(&a, &l);
	if (!e)
		e = load_probes(&a);
	if (!e)
		e = start_data_path(&a);
	if (!e)
		e = attach_all(&a);
	if (!e)
		e = open_ring(&a);
	if (!e && l.pid > 0) {
		e = target_release(&l, err, sizeof(err));
		if (e) {
			fail("%s", err);
			a.w[0].gone = true;
		}
	}
	if (e) {
		if (l.pid > 0 && !a.w[0].gone) {
			close(l.go_fd); /* the held child exits without exec */
			waitpid(l.pid, NULL, 0);
			a.w[0].gone = true;
		}
		teardown(&a);
		return 1;
	}
	announce(&a);

	a.fe_ctx.model = a.model;
	a.fe_ctx.cfg = cfg;
	a.fe_ctx.status = &a.status;
	a.fe_ctx.interval_s = cfg->interval_s;
	budget_init(&a.budget, cfg->max_overhead_pct);
	a.allocs_on = true;
	a.status.duty = 1.0;
	a.status.counters_exact = true;
	a.status.budget_pct = cfg->max_overhead_pct;
	model_tick(a.model, now_ns()); /* interval zero: the start line */
	e = a.fe->start(&a.fe_ctx);
	if (e) {
		fail("cannot start the %s display: %s", a.fe->name, strerror(-e));
		teardown(&a);
		return 1;
	}
	a.fe_started = true;
	e = run_loop(&a);
	teardown(&a);
	if (e) {
		fail("%s", strerror(-e));
		return 1;
	}
	return 0;
}
