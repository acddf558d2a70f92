// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbol_hint.c - how to get a symbol for a frame of a stripped file
 * (symbol_hint.h).
 *
 * The package is found the way `dpkg -S` does, by reading the file lists
 * under /var/lib/dpkg/info for the mapped path (and, on merged-/usr
 * systems, the same path without its /usr prefix, as older packages list
 * it). Results, found or not, are cached per module path (interned, so the
 * pointer is the key) for the life of the process.
 */
#include "stacks/symbol_hint.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DPKG_INFO "/var/lib/dpkg/info"
#define CACHE_MAX 64

struct cached {
	const char *path; /* interned module path */
	char pkg[96];     /* "" when no package ships it */
};

static struct cached cache[CACHE_MAX];
static int ncache;

/* Whether the dpkg list file names path on a line of its own. */
static bool list_has(const char *list, const char *path, const char *alt)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen(list, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = !strcmp(line, path) || (alt && !strcmp(line, alt));
	}
	fclose(f);
	return found;
}

static void find_package(const char *path, char *pkg, size_t len)
{
	const char *alt = !strncmp(path, "/usr/", 5) ? path + 4 : NULL;
	DIR *d = opendir(DPKG_INFO);
	struct dirent *e;

	pkg[0] = '\0';
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char list[512];

		if (n < 6 || strcmp(e->d_name + n - 5, ".list"))
			continue;
		snprintf(list, sizeof(list), "%s/%s", DPKG_INFO, e->d_name);
		if (!list_has(list, path, alt))
			continue;
		/* "libsqlite3-0:amd64.list" -> "libsqlite3-0" */
		snprintf(pkg, len, "%.*s", (int)strcspn(e->d_name, ":."), e->d_name);
		break;
	}
	if (d)
		closedir(d);
}

static const char *package_of(const char *path)
{
	struct cached *c;
	int i;

	for (i = 0; i < ncache; i++)
		if (cache[i].path == path)
			return cache[i].pkg[0] ? cache[i].pkg : NULL;
	if (ncache == CACHE_MAX)
		return NULL;
	c = &cache[ncache++];
	c->path = path;
	find_package(path, c->pkg, sizeof(c->pkg));
	return c->pkg[0] ? c->pkg : NULL;
}

void symbol_hint_format(const char *module, const char *pkg, const char *build_id,
			const char *debug_dir, char *buf, size_t len)
{
	size_t n = 0;

	n += snprintf(buf, len, "%s has no symbols here (stripped): ", module ? module : "?");
	if (n < len && pkg)
		n += snprintf(buf + n, len - n, "install %s-dbgsym (Debian's debian-debug archive)",
			      pkg);
	else if (n < len)
		n += snprintf(buf + n, len - n, "install its package's debug symbols");
	if (n < len && build_id && strlen(build_id) > 2)
		snprintf(buf + n, len - n, " or put them at %s/.build-id/%.2s/%s.debug", debug_dir,
			 build_id, build_id + 2);
}

bool symbol_hint(const struct mt_frame *f, char *buf, size_t len)
{
	const char *pkg = NULL;

	if (len)
		buf[0] = '\0';
	if (!(f->flags & MT_FRAME_NOSYM) || !f->module_path || f->module_path[0] != '/')
		return false;
	if (strncmp(f->module_path, "/proc/", 6))
		pkg = package_of(f->module_path);
	symbol_hint_format(f->module, pkg, f->build_id, "/usr/lib/debug", buf, len);
	return true;
}
