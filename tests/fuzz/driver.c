// SPDX-License-Identifier: GPL-2.0-only
/*
 * driver.c - the standalone main() shared by every fuzz harness: replays
 * inputs through LLVMFuzzerTestOneInput() without libFuzzer, so a corpus
 * is a regression test (make check, tests/fuzz/run-replay).
 *
 *     replay_TARGET [-v] FILE|DIR...
 *
 * Each FILE, and each regular file directly in each DIR (sorted by name),
 * is read whole into a buffer of exactly its size (so ASan sees any read
 * past the end) and passed once. LLVMFuzzerInitialize() runs first when
 * the harness defines it. Prints "TARGET: N inputs replayed" and exits 0;
 * a harness that crashes or trips a sanitizer takes the process down, and
 * the input it was running is named first on stderr (sanitizer death
 * callback, or the fatal signal). An unreadable path or an empty DIR is an
 * error (exit 2): a corpus that silently vanished is not a pass.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
/* Provided by the ASan/UBSan runtimes; absent in a plain build. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static const char *current; /* the input being replayed, for crash reports */

static void say_current(void)
{
	if (current) {
		/* async-signal-safe: called from a signal handler too */
		static const char pfx[] = "fuzz replay: crashed on input ";

		if (write(2, pfx, sizeof(pfx) - 1) < 0 || write(2, current, strlen(current)) < 0 ||
		    write(2, "\n", 1) < 0)
			return;
	}
}

static void on_fatal_signal(int sig)
{
	say_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int read_whole(const char *path, uint8_t **data, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	/* malloc(0) may return NULL; keep a real, empty allocation */
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*data = buf;
	*size = n;
	return 0;
}

static int replay_file(const char *path, int verbose)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int err = read_whole(path, &data, &size);

	if (err) {
		fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(-err));
		return err;
	}
	if (verbose)
		fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path, size);
	current = path;
	LLVMFuzzerTestOneInput(data, size);
	current = NULL;
	free(data);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replay one argument; adds the inputs run to *count. 0 or -errno. */
static int replay_arg(const char *arg, int verbose, size_t *count)
{
	struct dirent **ents;
	struct stat st;
	int n, i, err = 0;
	size_t before = *count;

	if (stat(arg, &st)) {
		fprintf(stderr, "fuzz replay: %s: %s\n", arg, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		err = replay_file(arg, verbose);
		*count += !err;
		return err;
	}
	n = scandir(arg, &ents, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "fuzz replay: %s: %s\n", arg, strerror(errno));
		return -errno;
	}
	for (i = 0; i < n; i++) {
		char path[4096];

		if (!err && ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", arg, ents[i]->d_name);
			if (!stat(path, &st) && S_ISREG(st.st_mode)) {
				err = replay_file(path, verbose);
				*count += !err;
			}
		}
		free(ents[i]);
	}
	free(ents);
	if (!err && *count == before) {
		fprintf(stderr, "fuzz replay: %s: no inputs\n", arg);
		err = -ENOENT;
	}
	return err;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int verbose = 0, i, first = 1;
	size_t count = 0;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
		first = 2;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: %s [-v] FILE|DIR...\n", name);
		return 2;
	}
	if (__sanitizer_set_death_callback) {
		/* the sanitizer reports the signal itself, then calls back */
		__sanitizer_set_death_callback(say_current);
	} else {
		static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

		for (i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
			signal(sigs[i], on_fatal_signal);
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = first; i < argc; i++)
		if (replay_arg(argv[i], verbose, &count))
			return 2;
	printf("%s: %zu inputs replayed\n", name, count);
	return 0;
}
