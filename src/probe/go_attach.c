// SPDX-License-Identifier: GPL-2.0-only
/*
 * go_attach.c - entry uprobes on a Go process's runtime.mProf_Malloc,
 * freeSpecial and mProf_Free (go_attach.h). The mProf_Malloc probe's
 * cookie says which registers hold its arguments in that Go version.
 */
#include "probe/go_attach.h"
#include "probe/link_release.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "memtop/abi.h"

struct go_probes {
	struct bpf_link *links[GO_NFN];
};

static const enum mt_go_prog progs[GO_NFN] = {
	[GO_FN_MALLOC] = MT_GO_PROG_MALLOC,
	[GO_FN_FREE] = MT_GO_PROG_FREE,
};

static void describe(const struct go_target *gt, struct attach_info *info)
{
	size_t len = 0;

	memset(info, 0, sizeof(*info));
	info->mode = MT_ATTACH_GO;
	info->nprobes = GO_NFN;
	snprintf(info->allocator, sizeof(info->allocator), "go");
	for (int fn = 0; fn < GO_NFN && len < sizeof(info->detail); fn++) {
		info->nslow += gt->slow[fn];
		len += snprintf(info->detail + len, sizeof(info->detail) - len, "%s%s@+%u%s",
				fn ? " " : "", go_runtime_fn_name(fn), gt->delta[fn],
				gt->slow[fn] ? "(slow)" : "");
	}
	if (len < sizeof(info->detail))
		snprintf(info->detail + len, sizeof(info->detail) - len, " (%s, %s)", gt->version,
			 gt->malloc_sig);
}

struct go_probes *go_attach(struct mt_bpf *b, pid_t pid, const char *exe_path,
			    const struct go_target *gt, struct attach_info *info, char *err,
			    size_t errlen)
{
	struct go_probes *gp = calloc(1, sizeof(*gp));
	int e = 0, fn;

	if (!gp) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	for (fn = 0; !e && fn < GO_NFN; fn++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts,
			    .bpf_cookie = fn == GO_FN_MALLOC ? gt->malloc_args : gt->kind_profile);

		gp->links[fn] = bpf_program__attach_uprobe_opts(bpf_loader_prog_go(b, progs[fn]),
								pid, exe_path, gt->off[fn], &opts);
		if (!gp->links[fn]) {
			e = -errno;
			if (e == -ESRCH)
				snprintf(err, errlen, "process %d exited while attaching", pid);
			else
				snprintf(err, errlen, "cannot probe %s in %s: %s",
					 go_runtime_fn_name(fn), exe_path, strerror(-e));
		}
	}
	if (e) {
		go_detach(gp);
		errno = -e;
		return NULL;
	}
	describe(gt, info);
	return gp;
}

void go_detach(struct go_probes *gp)
{
	if (!gp)
		return;
	for (int fn = 0; fn < GO_NFN; fn++)
		link_release(gp->links[fn]);
	free(gp);
}
