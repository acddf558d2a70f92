// cflags: -O2 -fno-omit-frame-pointer
// ldflags: -Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lstdc++ -lm -ldl
/*
 * mt_jemalloc_static - mt_jemalloc linked with Debian's static
 * libjemalloc_pic.a instead of libjemalloc.so.2: jemalloc's malloc,
 * mallocx and operator new live in the executable itself (its malloc is
 * exported, so libc's and libstdc++'s own calls bind to it as well), and
 * memtop must find and probe them there. Same modes and truth as
 * mt_jemalloc.c.
 */
#include "mt_jemalloc.c"
