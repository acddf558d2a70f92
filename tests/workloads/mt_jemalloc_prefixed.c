// cflags: -O2 -fno-omit-frame-pointer
// ldflags: -ljemalloc_je -lstdc++ -lm -ldl
/*
 * mt_jemalloc_prefixed - mt_jemalloc built against a je_-prefixed jemalloc
 * (what --with-jemalloc-prefix=je_ makes), linked statically: the program
 * calls je_malloc, je_mallocx, je_free ... by name, while malloc is still
 * glibc's (libc, libstdc++). libjemalloc_je.a is Debian's
 * libjemalloc_pic.a with its public C names given the prefix (the
 * Makefile's rule); jemalloc.h with JEMALLOC_NO_RENAME declares exactly
 * those je_ names. Same modes and truth as mt_jemalloc.c, every call of
 * which goes to a je_ entry point here.
 */
#include <malloc.h>

#include "alloc_family.h"
#define JEMALLOC_NO_RENAME
#include <jemalloc/jemalloc.h>

#define malloc je_malloc
#define calloc je_calloc
#define realloc je_realloc
#define free je_free
#define posix_memalign je_posix_memalign
#define aligned_alloc je_aligned_alloc
#define memalign je_memalign
#define valloc je_valloc
#define mallocx je_mallocx
#define rallocx je_rallocx
#define sdallocx je_sdallocx
#define dallocx je_dallocx

#include "mt_jemalloc.c"
