// Part of mt_go, mt_go_cgo, mt_go_stripped and mt_go_1.2x, not of
// mt_go_noprof: a real reference to runtime.MemProfile. Without one the
// linker turns memory profiling off (runtime.MemProfileRate 0), as in a
// program that imports neither runtime/pprof nor net/http/pprof.
package main

import "runtime"

func init() {
	var recs []runtime.MemProfileRecord
	runtime.MemProfile(recs, false)
}
