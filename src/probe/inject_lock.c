// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_lock.c - one injection at a time on this host (inject_lock.h).
 */
#include "probe/inject_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "util/clock.h"

int inject_lock(void)
{
	__u64 deadline = clock_mono_ns() + INJECT_LOCK_WAIT_MS * 1000000ULL;
	struct timespec nap = { 0, 5 * 1000000L };
	struct stat st;
	int fd = open(INJECT_LOCK_PATH, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);

	if (fd < 0)
		return -1;
	/* a regular file of root's: anything else is not this lock */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0) {
		close(fd);
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || clock_mono_ns() >= deadline) {
			close(fd);
			return errno == EWOULDBLOCK ? -EBUSY : -1;
		}
		nanosleep(&nap, NULL); /* another memtop's injection: milliseconds */
	}
	return fd;
}

void inject_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* the lock goes with the descriptor */
}
