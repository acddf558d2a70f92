// SPDX-License-Identifier: GPL-2.0-only
/*
 * push.c - pprof snapshots to a Pyroscope-compatible /ingest endpoint (see
 * push.h).
 *
 * Two sides share one mutex-protected slot holding at most one batch:
 *  - the main loop (push_tick/push_now) owns the alloc baseline and the
 *    interval bookkeeping; it fills the slot only when it is empty, so a
 *    slow or dead endpoint costs memory for one batch and nothing else.
 *    While the slot is busy, due intervals are skipped without advancing
 *    the baseline, so the next batch covers them: no allocation is lost
 *    and none is counted twice.
 *  - the sender thread owns the curl handle; it drains the slot item by
 *    item, sleeping on a condition variable (CLOCK_MONOTONIC) between
 *    retries so push_free() can wake it. Transfers poll a progress
 *    callback that aborts them once the shutdown grace period is over.
 */
#include "export/push.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/pprof.h"
#include "util/clock.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

#define NSEC 1000000000LL
#define BACKOFF_FIRST_S 1.0

struct item {
	char *url;
	__u8 *body;
	size_t len;
};

struct batch {
	struct item *items;
	size_t n;
	size_t next; /* first item not sent yet */
};

struct push {
	/* main loop only */
	char *base;
	char app[64];
	char host[64];
	double every_s;
	long connect_ms, timeout_ms;
	double backoff_max_s;
	struct pprof_delta *delta;
	__u64 last_due_mono; /* model time of the last due interval; 0: none */
	__s64 last_until_ns; /* wall clock the last batch ran up to; 0: none */

	/* shared, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch *batch;
	struct push_status st;
	double backoff_s;
	__s64 next_try_ns; /* monotonic */
	bool closing;
	__s64 deadline_ns; /* monotonic; valid when closing */

	pthread_t thread;
};

static void batch_free(struct batch *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++) {
		free(b->items[i].url);
		free(b->items[i].body);
	}
	free(b->items);
	free(b);
}

/* ==== URLs ============================================================ */

static void sanitize(char *dst, size_t len, const char *s)
{
	size_t i;

	if (!s || !*s)
		s = "unknown";
	for (i = 0; s[i] && i + 1 < len; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		dst[i] = ok ? c : '_';
	}
	dst[i] = '\0';
}

static bool valid_app(const char *app)
{
	char clean[64];

	if (!app || !*app || strlen(app) >= sizeof(clean))
		return false;
	sanitize(clean, sizeof(clean), app);
	return !strcmp(clean, app);
}

/* Append s percent-encoded (RFC 3986 unreserved characters kept). */
static size_t url_escape(char *dst, size_t room, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';

		if (keep) {
			if (n + 1 < room)
				dst[n] = (char)c;
			n++;
		} else {
			if (n + 3 < room) {
				dst[n] = '%';
				dst[n + 1] = hex[c >> 4];
				dst[n + 2] = hex[c & 15];
			}
			n += 3;
		}
	}
	if (room)
		dst[n < room ? n : room - 1] = '\0';
	return n;
}

static bool valid_base(const char *base)
{
	return base && (!strncmp(base, "http://", 7) || !strncmp(base, "https://", 8)) &&
	       !strchr(base, '?') && !strchr(base, '#') && !strpbrk(base, " \t\r\n");
}

int push_ingest_url(const char *base, const char *app, const char *host, pid_t pid,
		    const char *comm, __s64 from_s, __s64 until_s, char *buf, size_t len)
{
	static const char ingest[] = "/ingest";
	char name[256], h[64], c[32];
	size_t blen, used;
	int w;

	if (!valid_base(base))
		return -EINVAL;
	blen = strlen(base);
	while (blen && base[blen - 1] == '/')
		blen--;
	if (blen >= sizeof(ingest) - 1 &&
	    !strncmp(base + blen - (sizeof(ingest) - 1), ingest, sizeof(ingest) - 1))
		blen -= sizeof(ingest) - 1;
	sanitize(h, sizeof(h), host);
	sanitize(c, sizeof(c), comm);
	snprintf(name, sizeof(name), "%s{host=%s,pid=%d,comm=%s}", app ? app : PUSH_DEFAULT_APP, h,
		 (int)pid, c);
	w = snprintf(buf, len, "%.*s/ingest?name=", (int)blen, base);
	if (w < 0 || (size_t)w >= len)
		return -ENAMETOOLONG;
	used = (size_t)w;
	used += url_escape(buf + used, len - used, name);
	if (used >= len)
		return -ENAMETOOLONG;
	w = snprintf(buf + used, len - used, "&from=%lld&until=%lld&format=pprof",
		     (long long)from_s, (long long)until_s);
	if (w < 0 || (size_t)w >= len - used)
		return -ENAMETOOLONG;
	return 0;
}

/* ==== sender thread =================================================== */

struct response {
	char text[96]; /* start of the body, for error messages */
	size_t len;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct response *r = arg;
	size_t n = size * nmemb, room = sizeof(r->text) - 1 - r->len;

	if (room) {
		memcpy(r->text + r->len, data, n < room ? n : room);
		r->len += n < room ? n : room;
		r->text[r->len] = '\0';
	}
	return n;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct push *p = arg;
	bool closing = __atomic_load_n(&p->closing, __ATOMIC_ACQUIRE);

	return closing &&
	       ((__s64)clock_mono_ns()) >= __atomic_load_n(&p->deadline_ns, __ATOMIC_ACQUIRE);
}

enum outcome { SENT, RETRY, REJECTED };

/* POST one item. On failure writes the cause into err. */
static enum outcome post(struct push *p, CURL *c, const struct item *it, char *err, size_t errlen)
{
	char curl_err[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL;
	struct response r = { .len = 0 };
	long status = 0;
	CURLcode rc;
	char *nl;

	r.text[0] = '\0';
	curl_easy_reset(c);
	hdr = curl_slist_append(hdr, "Content-Type: application/octet-stream");
	hdr = curl_slist_append(hdr, "Expect:"); /* no 100-continue round trip */
	curl_easy_setopt(c, CURLOPT_URL, it->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)it->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "memtop/" MEMTOP_VERSION);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, p->connect_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM */
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, p);
	rc = curl_easy_perform(c);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "push failed: %.110s",
			 *curl_err ? curl_err : curl_easy_strerror(rc));
		return RETRY;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return SENT;
	nl = strpbrk(r.text, "\r\n");
	if (nl)
		*nl = '\0';
	snprintf(err, errlen, "push rejected: HTTP %ld%s%s", status, *r.text ? ": " : "", r.text);
	return status >= 400 && status < 500 && status != 408 && status != 429 ? REJECTED : RETRY;
}

/* Wait on the condition variable until abs_ns (monotonic) or a signal. */
static void wait_until(struct push *p, __s64 abs_ns)
{
	struct timespec ts = { .tv_sec = abs_ns / NSEC, .tv_nsec = abs_ns % NSEC };

	pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

static void record(struct push *p, enum outcome o, const char *err)
{
	struct batch *b = p->batch;

	if (o == SENT) {
		p->st.sent++;
		p->st.last_ok_time = time(NULL);
		p->st.last_error[0] = '\0';
		p->backoff_s = 0;
	} else {
		p->st.failed++;
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err);
	}
	if (o == REJECTED)
		p->st.dropped++;
	if (o == RETRY) {
		p->backoff_s = p->backoff_s ? p->backoff_s * 2 : BACKOFF_FIRST_S;
		if (p->backoff_s > p->backoff_max_s)
			p->backoff_s = p->backoff_max_s;
		p->next_try_ns = ((__s64)clock_mono_ns()) + (__s64)(p->backoff_s * NSEC);
		return;
	}
	if (++b->next == b->n) {
		batch_free(b);
		p->batch = NULL;
		p->st.pending = false;
	}
}

static void *sender_main(void *arg)
{
	struct push *p = arg;
	CURL *c = NULL;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		char err[sizeof(p->st.last_error)] = "";
		const struct item *it;
		enum outcome o;
		__s64 now = ((__s64)clock_mono_ns()), until;

		if (p->closing && (!p->batch || now >= p->deadline_ns))
			break;
		if (!p->batch) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		if (now < p->next_try_ns) {
			until = p->next_try_ns;
			if (p->closing && p->deadline_ns < until)
				until = p->deadline_ns;
			wait_until(p, until);
			continue;
		}
		/* Only this thread frees or advances the batch: it stays valid
		 * while the lock is dropped for the transfer. */
		it = &p->batch->items[p->batch->next];
		pthread_mutex_unlock(&p->lock);
		if (!c)
			c = curl_easy_init();
		if (c) {
			o = post(p, c, it, err, sizeof(err));
		} else {
			snprintf(err, sizeof(err), "push failed: cannot initialise libcurl");
			o = RETRY;
		}
		pthread_mutex_lock(&p->lock);
		record(p, o, err);
	}
	pthread_mutex_unlock(&p->lock);
	if (c)
		curl_easy_cleanup(c);
	return NULL;
}

/* ==== main loop side ================================================== */

struct push *push_new(const struct push_opts *o)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	struct push *p;
	int err;

	if (!o || !valid_base(o->url) || (o->app && !valid_app(o->app))) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->base = strdup(o->url);
	p->delta = pprof_delta_new();
	if (!p->base || !p->delta) {
		err = ENOMEM;
		goto fail;
	}
	snprintf(p->app, sizeof(p->app), "%s", o->app ? o->app : PUSH_DEFAULT_APP);
	if (o->host)
		snprintf(p->host, sizeof(p->host), "%s", o->host);
	else if (gethostname(p->host, sizeof(p->host)))
		snprintf(p->host, sizeof(p->host), "unknown");
	p->host[sizeof(p->host) - 1] = '\0';
	p->every_s = o->every_s > 0 ? o->every_s : 15;
	p->connect_ms = (long)((o->connect_timeout_s > 0 ? o->connect_timeout_s : 2) * 1000);
	p->timeout_ms = (long)((o->timeout_s > 0 ? o->timeout_s : 10) * 1000);
	p->backoff_max_s = o->backoff_max_s > 0 ? o->backoff_max_s : 60;

	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		err = EIO;
		goto fail;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* The sender thread takes no signals: they stay with the main loop
	 * (its signalfd, or the default action) whatever the caller's mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, sender_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		curl_global_cleanup();
		goto fail;
	}
	return p;
fail:
	pprof_delta_free(p->delta);
	free(p->base);
	free(p);
	errno = err;
	return NULL;
}

static __u64 now_of(struct mt_model *m)
{
	__u64 now = model_now(m);

	return now ? now : (__u64)((__s64)clock_mono_ns());
}

/* Encode target t's growth since the baseline into item it. 1: added,
 * 0: nothing to report, -errno. */
static int encode_target(struct push *p, struct mt_model *m, const struct mt_target *t,
			 __s64 until_ns, struct item *it)
{
	struct pprof_model_opts o = { .pid = t->pid, .delta = p->delta, .time_ns = until_ns };
	__s64 from_ns = p->last_until_ns;
	__s64 start_ns = t->start_ns ? pprof_wall_ns(t->start_ns) : 0;
	char url[1024];
	struct pprof *pp;
	int err;

	if (!from_ns || start_ns > from_ns)
		from_ns = start_ns ? start_ns : until_ns - (__s64)(p->every_s * NSEC);
	if (from_ns >= until_ns)
		from_ns = until_ns - NSEC;
	o.duration_ns = until_ns - from_ns;
	pp = pprof_from_model(m, &o);
	if (!pp)
		return -errno;
	if (!pprof_sample_count(pp)) {
		pprof_free(pp);
		return 0;
	}
	err = push_ingest_url(p->base, p->app, p->host, t->pid, t->comm, from_ns / NSEC,
			      (until_ns + NSEC - 1) / NSEC, url, sizeof(url));
	if (!err)
		err = pprof_encode_gz(pp, &it->body, &it->len);
	pprof_free(pp);
	if (err)
		return err;
	it->url = strdup(url);
	if (!it->url) {
		free(it->body);
		return -ENOMEM;
	}
	return 1;
}

static int push_batch(struct push *p, struct mt_model *m)
{
	size_t n = model_target_count(m), i;
	__s64 until_ns = pprof_wall_ns(now_of(m));
	struct batch *b;
	bool busy;
	int err = 0;

	pthread_mutex_lock(&p->lock);
	busy = p->batch != NULL;
	if (busy)
		p->st.skipped++;
	pthread_mutex_unlock(&p->lock);
	if (busy)
		return -EBUSY;

	b = calloc(1, sizeof(*b));
	if (!b || !(b->items = calloc(n ? n : 1, sizeof(*b->items)))) {
		free(b);
		return -ENOMEM;
	}
	for (i = 0; i < n && err >= 0; i++) {
		err = encode_target(p, m, model_target_at(m, i), until_ns, &b->items[b->n]);
		if (err > 0)
			b->n++;
	}
	p->last_until_ns = until_ns;
	if (err < 0 || !b->n) {
		batch_free(b);
		return err < 0 ? err : 0;
	}
	pthread_mutex_lock(&p->lock);
	p->batch = b;
	p->st.pending = true;
	p->next_try_ns = 0;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int push_tick(struct push *p, struct mt_model *m)
{
	__u64 now = now_of(m);

	if (!p->last_due_mono) {
		p->last_due_mono = now; /* the first interval starts here */
		return 0;
	}
	if ((double)(now - p->last_due_mono) < p->every_s * 1e9 * 0.999)
		return 0;
	p->last_due_mono = now;
	return push_batch(p, m);
}

int push_now(struct push *p, struct mt_model *m)
{
	p->last_due_mono = now_of(m);
	return push_batch(p, m);
}

void push_get_status(struct push *p, struct push_status *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->st;
	pthread_mutex_unlock(&p->lock);
}

const char *push_state_change(const struct push_status *now, const char *url,
			      struct push_said *said, char *buf, size_t len)
{
	bool failing = now->last_error[0] != '\0';

	if (failing == said->failing && (!failing || !strcmp(now->last_error, said->error)))
		return NULL;
	if (failing)
		snprintf(buf, len, "--push %s: failing: %s (%llu attempts failed; retrying)", url,
			 now->last_error, (unsigned long long)now->failed);
	else
		snprintf(buf, len, "--push %s: profiles accepted again (%llu attempts had failed)",
			 url, (unsigned long long)now->failed);
	said->failing = failing;
	snprintf(said->error, sizeof(said->error), "%s", now->last_error);
	return buf;
}

void push_free(struct push *p, double grace_s)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->deadline_ns,
			 ((__s64)clock_mono_ns()) + (__s64)(grace_s > 0 ? grace_s * NSEC : 0),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&p->closing, true, __ATOMIC_RELEASE);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	batch_free(p->batch);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	curl_global_cleanup();
	pprof_delta_free(p->delta);
	free(p->base);
	free(p);
}
