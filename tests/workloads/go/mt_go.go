// mt_go: a Go service's allocation patterns, with their truth, for memtop's
// Go probes (docs/go.md, tests/integration/test_go.py).
//
// Prints "READY <version> <MemProfileRate>", then once a second a truth
// line {"truth": "mt_go", "time": ..., "leak_bytes": ..., ...}:
//   - a leak three frames deep (leakOuter -> leakMiddle -> leakInner keeps
//     every 4 KiB block it makes: main.leakInner is the site);
//   - a cache (main.cacheFill) that fills to -cache bytes in its first
//     seconds and then only replaces entries: a plateau;
//   - churn (main.churn): short-lived 8 KiB buffers, dropped at once.
//
// The truth line's buckhash_sys is runtime.MemStats.BuckHashSys: the
// memory of the runtime's heap profile buckets, which are never freed.
//
// Built three ways: mt_go (with memprofile_ref.go: a reference to
// runtime.MemProfile, so the runtime samples at its default rate),
// mt_go_noprof (this file alone: the linker sets MemProfileRate to 0, as in
// any program that imports neither runtime/pprof nor net/http/pprof) and
// mt_go_pprof (with pprof_dump.go: runtime/pprof imported, the heap profile
// written on SIGUSR1).
//
// -mode=sum is for integrity runs (bare against watched): for each line on
// stdin it builds a batch of maps, slices and strings from a seeded
// generator, drops most of them (the collector runs), and prints
// "sum N HEX": a SHA-256 of everything kept, in sorted order, which depends
// only on N (the batch, from 1); EOF exits 0.
//
// -rate0 sets runtime.MemProfileRate to 0 first (the runtime then samples
// nothing), -profrate N to N (the bench's cost per sample: 4096 samples
// nearly every request). -mode=server is the bench's server-like loop (no leak, no
// cache: requests that build and drop buffers, flat out or paced to
// -rate requests/s), which prints
// "win <requests/s> <CPU ns per request>" once a second until killed
// (tests/bench/go.py); -duration ends a scenario run.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"syscall"
	"time"
)

// tickHook, when a file of the build sets it, runs on the main goroutine
// between two ticks of the scenario, when none of its allocations is under
// way (mt_go_pprof: pprof_dump.go).
var tickHook func()

// startHook, when set, runs after READY, before the scenario starts.
var startHook func()

var (
	leaked                            [][]byte
	cache                             = map[int][]byte{}
	churnSink                         []byte
	leakBytes, cacheBytes, churnBytes int64
)

//go:noinline
func leakInner() {
	leaked = append(leaked, make([]byte, 4096))
	leakBytes += 4096
}

//go:noinline
func leakMiddle() { leakInner() }

//go:noinline
func leakOuter() { leakMiddle() }

//go:noinline
func cacheFill(key, entries int) {
	if _, ok := cache[key%entries]; !ok {
		cacheBytes += 4096
	}
	cache[key%entries] = make([]byte, 4096)
}

//go:noinline
func churn() {
	b := make([]byte, 8192)
	b[0] = 1
	churnSink = b
	churnBytes += 8192
}

// request is one unit of the server-like loop: a few buffers of mixed
// sizes built, used and dropped.
//
//go:noinline
func request(i int) int {
	hdr := make([]byte, 512)
	body := make([]byte, 1024+(i%8)*512)
	parts := make([]string, 0, 8)
	for k := 0; k < 8; k++ {
		parts = append(parts, string(body[k*64:k*64+32]))
	}
	hdr[0] = byte(len(parts))
	churnSink = body
	return len(hdr) + len(body)
}

// cpuNs is the process's CPU time (all threads, the GC's too).
func cpuNs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// serve runs requests, paced to rate per second (0: flat out), and
// prints one window a second.
func serve(rate int) {
	served, sum := 0, 0
	start := time.Now()
	winStart, winCPU, winServed := start, cpuNs(), 0
	for {
		for k := 0; k < 256; k++ {
			sum += request(served)
			served++
		}
		if rate > 0 {
			if d := time.Duration(float64(served)/float64(rate)*1e9) - time.Since(start); d > 0 {
				time.Sleep(d)
			}
		}
		if el := time.Since(winStart); el >= time.Second {
			cpu := cpuNs()
			n := served - winServed
			fmt.Printf("win %.0f %.1f %d\n", float64(n)/el.Seconds(),
				float64(cpu-winCPU)/float64(n), sum&1)
			winStart, winCPU, winServed = time.Now(), cpu, served
		}
	}
}

// sumBatch builds batch n's data and returns its digest.
func sumBatch(n int) string {
	rng := uint64(0x9E3779B97F4A7C15) * uint64(n)
	next := func() uint64 {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return rng
	}
	kept := map[string][]byte{}
	for i := 0; i < 200000; i++ {
		r := next()
		key := fmt.Sprintf("k%d", r%5000)
		buf := make([]byte, 16+r%2048)
		for j := range buf {
			buf[j] = byte(r>>(j%56)) + byte(j)
		}
		if r%3 == 0 {
			delete(kept, key)
		} else {
			kept[key] = append(kept[key][:0:0], buf...)
		}
		if i%20000 == 0 {
			runtime.GC()
		}
	}
	keys := make([]string, 0, len(kept))
	for k := range kept {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write(kept[k])
	}
	return fmt.Sprintf("%x %d", h.Sum(nil), len(keys))
}

func sumMode() {
	in := bufio.NewScanner(os.Stdin)
	for n := 1; in.Scan(); n++ {
		fmt.Printf("sum %d %s\n", n, sumBatch(n))
	}
	os.Exit(0)
}

func main() {
	rate0 := flag.Bool("rate0", false, "set runtime.MemProfileRate to 0")
	mode := flag.String("mode", "scenario", "scenario or server")
	duration := flag.Float64("duration", 0, "seconds to run (0: until killed)")
	leakRate := flag.Int("leak", 2<<20, "leaked bytes per second")
	cacheMax := flag.Int("cache", 16<<20, "cache size in bytes")
	churnRate := flag.Int("churn", 16<<20, "churned bytes per second")
	reqRate := flag.Int("rate", 0, "server mode: requests per second (0: flat out)")
	profRate := flag.Int("profrate", -1, "set runtime.MemProfileRate (-1: leave it)")
	flag.Parse()
	if *rate0 {
		runtime.MemProfileRate = 0
	}
	if *profRate >= 0 {
		runtime.MemProfileRate = *profRate
	}
	fmt.Printf("READY %s %d\n", runtime.Version(), runtime.MemProfileRate)
	if startHook != nil {
		startHook()
	}

	if *mode == "sum" {
		sumMode()
	}
	start := time.Now()
	if *mode == "server" {
		serve(*reqRate)
		return
	}
	entries := *cacheMax / 4096
	const tick = 10 * time.Millisecond
	next := start
	key := 0
	lastTruth := start
	for *duration == 0 || time.Since(start).Seconds() < *duration {
		for n := 0; n < *leakRate/4096/100; n++ {
			leakOuter()
		}
		// fill the cache within its first 4 seconds, then refresh it slowly
		fill := entries / 400
		if cacheBytes >= int64(*cacheMax) {
			fill = 1
		}
		for n := 0; n < fill; n++ {
			cacheFill(key, entries)
			key++
		}
		for n := 0; n < *churnRate/8192/100; n++ {
			churn()
		}
		if tickHook != nil {
			tickHook()
		}
		if time.Since(lastTruth) >= time.Second {
			lastTruth = time.Now()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			line, _ := json.Marshal(map[string]interface{}{
				"truth": "mt_go", "time": float64(time.Now().UnixNano()) / 1e9,
				"leak_bytes": leakBytes, "cache_bytes": cacheBytes, "churn_bytes": churnBytes,
				"mem_profile_rate": runtime.MemProfileRate,
				"buckhash_sys":     ms.BuckHashSys,
			})
			fmt.Println(string(line))
		}
		next = next.Add(tick)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
	}
	os.Exit(0)
}
