//go:build cgo_variant

// The cgo variant of mt_go: the same program linked with libc through cgo
// (a dynamically linked executable, as every cgo program is).
package main

// #include <stdlib.h>
import "C"

func init() {
	C.free(C.malloc(16))
}
