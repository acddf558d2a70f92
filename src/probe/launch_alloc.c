// SPDX-License-Identifier: GPL-2.0-only
/*
 * launch_alloc.c - which allocator a command will call, before it runs
 * (launch_alloc.h).
 *
 * glibc's dynamic loader run with LD_TRACE_LOADED_OBJECTS=1 maps the
 * program's dependencies, prints them in load order ("name => path (addr)"
 * lines; LD_PRELOAD objects first) and exits without running the program:
 * this is what ldd does, and the order is the symbol search order. The
 * first object that defines malloc, after the executable itself, serves
 * every malloc of the program. memtop is about to execute the program
 * anyway, so running its loader first adds no new trust.
 */
#include "probe/launch_alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "readers/elf_file.h"

#define TRACE_MAX 65536

static bool defines_malloc(const char *path)
{
	struct elf_file *ef = elf_file_open(path);
	__u64 off, size;
	bool yes;

	if (!ef)
		return false;
	yes = elf_file_func_offset(ef, "malloc", &off, &size) == 0;
	elf_file_close(ef);
	return yes;
}

static bool is_glibc(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || (!strncmp(b, "libc-", 5) && strstr(b, ".so"));
}

/* The loader's list of exe's objects, NUL-terminated, in buf. */
static int trace_objects(const char *exe, char *buf, size_t len)
{
	size_t have = 0;
	int out[2], st;
	pid_t pid;
	ssize_t n;

	if (pipe2(out, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(out[1], STDOUT_FILENO);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	while (have + 1 < len && (n = read(out[0], buf + have, len - 1 - have)) > 0)
		have += (size_t)n;
	buf[have] = '\0';
	close(out[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ENOENT;
}

int launch_alloc_find(const char *exe, char *path, size_t len, bool *glibc)
{
	char *buf, *line, *save = NULL;
	int e;

	if (defines_malloc(exe)) {
		snprintf(path, len, "%s", exe);
		*glibc = false;
		return 0;
	}
	buf = malloc(TRACE_MAX);
	if (!buf)
		return -ENOMEM;
	e = trace_objects(exe, buf, TRACE_MAX);
	for (line = strtok_r(buf, "\n", &save); !e && line; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, "=> "), *p = arrow ? arrow + 3 : line, *end;

		while (*p == ' ' || *p == '\t')
			p++;
		end = strstr(p, " (");
		if (*p != '/' || !end)
			continue;
		*end = '\0';
		if (defines_malloc(p)) {
			snprintf(path, len, "%s", p);
			*glibc = is_glibc(p);
			free(buf);
			return 0;
		}
	}
	free(buf);
	return e ? e : -ENOENT;
}
