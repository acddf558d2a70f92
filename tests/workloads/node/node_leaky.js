// A Node.js service with one leak, one bounded cache and churn, for
// memtop's Node tests (tests/integration/test_node.py). Run with
// --expose-gc: it measures its own truth with V8's own accounting.
//
//   node --expose-gc node_leaky.js [--duration S] [--rate-scale K]
//
// Protocol: prints READY (after the calibration below) and waits for a
// byte on stdin; then works on timers (its event loop waits between
// batches, as a service's does) until --duration seconds have passed or
// another byte arrives, prints one JSON truth line and churns lightly,
// leaking nothing, until stdin closes (then it exits 0).
//
//   leakRecords   keeps every record it builds: a small object holding a
//                 string of 200 one-byte characters and an array of 32
//                 numbers, about 5 MB/s
//   cacheStep     a Map of 64 entries at most, each a 16 KiB string:
//                 full within a second, then only replaced
//   churnStep     short-lived arrays and strings, dropped at once
//
// Truth: the bytes one leaked record keeps alive in V8's heap (its object,
// string, array and its slot in the leak list), measured on 20,000
// records before READY as the growth of v8.getHeapStatistics()'s
// used_heap_size between two full collections (global.gc()), times the
// records leaked. That is V8's own live-object accounting, the one its
// sampling heap profiler weighs samples by.
'use strict';
const v8 = require('v8');

const args = process.argv.slice(2);
function opt(name, dflt) {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}
const DURATION_S = opt('--duration', 30);
const BATCH = 80; // records per 10 ms tick: up to 8,000 records/s

const leaked = [];
const cache = new Map();
const CACHE_MAX = 64;
let seq = 0;

function leakRecords(into, n) {
  for (let i = 0; i < n; i++) {
    const id = seq++;
    const rec = { id: id, name: ('user-' + id).padEnd(200, '.'), tags: new Array(32).fill(id) };
    into.push(rec);
  }
}

function cacheStep(k) {
  cache.set(k % CACHE_MAX, String(k).padEnd(16384, '#'));
}

function churnStep(n) {
  let total = 0;
  for (let i = 0; i < n; i++) {
    const tmp = new Array(64).fill(i);
    const s = ('churn-' + i).padEnd(100, '-');
    total += tmp.length + s.length;
  }
  return total;
}

function usedAfterGc() {
  global.gc();
  global.gc();
  return v8.getHeapStatistics().used_heap_size;
}

// calibration: bytes per kept record, in V8's accounting
const CAL = 20000;
const before = usedAfterGc();
const probe = [];
leakRecords(probe, CAL);
const after = usedAfterGc();
const perRecord = (after - before) / CAL;
probe.length = 0;
seq = 0;
usedAfterGc();

process.stdout.write('READY ' + JSON.stringify({ pid: process.pid, per_record: perRecord }) + '\n');

let start = 0;
let ticks = 0;
let sink = 0;
let timer = null;
let bytes = 0;

function finish() {
  clearInterval(timer);
  timer = null;
  const truth = {
    truth: 'node_leaky',
    time: Date.now() / 1000,
    leaked_records: leaked.length,
    per_record_bytes: perRecord,
    leak_bytes: Math.round(leaked.length * perRecord),
    leak_function: 'leakRecords',
    cache_entries: cache.size,
    seconds: (Date.now() - start) / 1000,
    sink: sink % 7,
  };
  process.stdout.write(JSON.stringify(truth) + '\n');
  setInterval(() => { sink += churnStep(20); }, 50);
}

function begin() {
  start = Date.now();
  timer = setInterval(() => {
    ticks++;
    leakRecords(leaked, BATCH);
    cacheStep(ticks);
    sink += churnStep(200);
    if (Date.now() - start >= DURATION_S * 1000)
      finish();
  }, 10);
}

process.stdin.on('data', (d) => {
  bytes += d.length;
  if (start === 0)
    begin();
  else if (timer !== null)
    finish();
});
process.stdin.on('end', () => process.exit(0));
