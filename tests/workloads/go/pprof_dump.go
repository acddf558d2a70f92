// Part of mt_go_pprof: runtime/pprof imported, and the runtime's own heap
// profile written on request, for the comparison with memtop's in-use
// (tests/integration/test_go_pprof.py).
//
// On SIGUSR1 the scenario stops between two ticks (none of its
// allocations under way), runs a full GC (which sweeps every dead object,
// so the GC's frees have all happened and the profile is published as of
// that cycle), writes the heap profile to -heapprofile, prints
// "HEAPPROFILE <path>" and stays stopped, allocating nothing, until
// SIGUSR2. With -waitstart the scenario starts only at a first SIGUSR2
// after READY (a tool attaches first, and sees every allocation of it).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

var (
	heapProfile = flag.String("heapprofile", "", "where SIGUSR1 writes the heap profile")
	waitStart   = flag.Bool("waitstart", false, "start the scenario at SIGUSR2")
)

func init() {
	dump := make(chan os.Signal, 1)
	resume := make(chan os.Signal, 1)
	signal.Notify(dump, syscall.SIGUSR1)
	signal.Notify(resume, syscall.SIGUSR2)
	startHook = func() {
		if *waitStart {
			<-resume
		}
	}
	tickHook = func() {
		select {
		case <-dump:
		default:
			return
		}
		runtime.GC()
		f, err := os.Create(*heapProfile)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "heap profile:", err)
			os.Exit(1)
		}
		fmt.Println("HEAPPROFILE", *heapProfile)
		<-resume
	}
}
