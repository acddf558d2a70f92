// mt_rust: a Rust program whose allocations all go through the standard
// library's growth frames, for the wrapper table (src/stacks/wrappers.c,
// tests/integration/test_wrappers.py). Each site is a function of the
// program's own that keeps what it builds:
//   grow_vec      Vec::push growth (alloc::raw_vec::finish_grow)
//   fill_map      HashMap::insert growth (hashbrown's reserve_rehash)
//   build_string  String::push_str growth (alloc::string, raw_vec)
//   format_text   format! (alloc::fmt::format, core::fmt::write, String as
//                 core::fmt::Write)
//   collect_squares  Iterator::collect into a Vec
//
// Prints "READY pid=N", waits for a byte on stdin, runs the phase, prints
// its truth {"truth": "mt_rust", "<site>_bytes": ...} (the bytes each
// site's kept objects hold, by their capacity), then waits for EOF or a
// byte on stdin and exits. The phase is 300 rounds (argument 1), 10 ms
// apart. Built with Debian's rustc (1.63) or newer.
use std::collections::HashMap;
use std::io::{Read, Write};

#[inline(never)]
fn grow_vec(keep: &mut Vec<Vec<u64>>, n: u64) -> usize {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(i);
    }
    let bytes = v.capacity() * 8;
    keep.push(v);
    bytes
}

#[inline(never)]
fn fill_map(keep: &mut Vec<HashMap<u64, u64>>, n: u64) -> usize {
    let mut m = HashMap::new();
    for i in 0..n {
        m.insert(i, i * 3);
    }
    // hashbrown: capacity buckets of 16 bytes plus a control byte each
    // (and a group's width more); an estimate for the truth, not exact
    let bytes = (m.capacity() * 8 / 7).next_power_of_two() * 17;
    keep.push(m);
    bytes
}

#[inline(never)]
fn build_string(keep: &mut Vec<String>, n: usize) -> usize {
    let mut s = String::new();
    for _ in 0..n {
        s.push_str("memtop sees through the growth of a String; ");
    }
    let bytes = s.capacity();
    keep.push(s);
    bytes
}

#[inline(never)]
fn format_text(keep: &mut Vec<String>, i: u64) -> usize {
    let s = format!(
        "{:>40}|{:>40}|{:>40}|{:>40}|{:>40}|{:>40}|{:>40}|{:>40}",
        i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7
    );
    let bytes = s.capacity();
    keep.push(s);
    bytes
}

#[inline(never)]
fn collect_squares(keep: &mut Vec<Vec<u64>>, n: u64) -> usize {
    let v: Vec<u64> = (0..n).filter(|x| x % 3 != 0).map(|x| x * x).collect();
    let bytes = v.capacity() * 8;
    keep.push(v);
    bytes
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    // every keeper sized up front: its own growth is not a site
    let mut vecs: Vec<Vec<u64>> = Vec::with_capacity(rounds);
    let mut maps: Vec<HashMap<u64, u64>> = Vec::with_capacity(rounds);
    let mut strings: Vec<String> = Vec::with_capacity(rounds);
    let mut texts: Vec<String> = Vec::with_capacity(rounds * 32);
    let mut squares: Vec<Vec<u64>> = Vec::with_capacity(rounds);
    let mut out = std::io::stdout();
    let mut byte = [0u8; 1];
    writeln!(out, "READY pid={}", std::process::id()).unwrap();
    out.flush().unwrap();
    let _ = std::io::stdin().read(&mut byte);
    let (mut vb, mut mb, mut sb, mut tb, mut cb) = (0, 0, 0, 0, 0);
    for r in 0..rounds {
        vb += grow_vec(&mut vecs, 4096);
        mb += fill_map(&mut maps, 1024);
        sb += build_string(&mut strings, 600);
        for k in 0..32 {
            tb += format_text(&mut texts, (r * 32 + k) as u64);
        }
        cb += collect_squares(&mut squares, 6144);
        // paced (about 70 KB of allocations per round, 10 ms apart), so
        // a tool's samples come at a rate it keeps up with
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    writeln!(
        out,
        "{{\"truth\": \"mt_rust\", \"grow_vec_bytes\": {}, \"fill_map_bytes\": {}, \
         \"build_string_bytes\": {}, \"format_text_bytes\": {}, \"collect_squares_bytes\": {}}}",
        vb, mb, sb, tb, cb
    )
    .unwrap();
    out.flush().unwrap();
    let _ = std::io::stdin().read(&mut byte);
    std::process::exit(0);
}
