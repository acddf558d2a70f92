// An allocation-heavy Node.js loop for tests/bench/node.py: builds and
// drops small objects, strings and arrays in chunks of about 10 ms, with
// a 1 ms timer between chunks (its event loop waits there, as a busy
// service's does between requests), and appends one line per second to
// OUT: "win <objects/s> <CPU ns per object>".
//
//   node node_churn.js OUT SECONDS
'use strict';
const fs = require('fs');

const out = fs.openSync(process.argv[2], 'a');
const end = Date.now() + Number(process.argv[3]) * 1000;
let kept = [];
let seq = 0;

function batch() {
  for (let i = 0; i < 200; i++) {
    const id = seq++;
    kept.push({ id: id, name: 'user-' + id, tags: [id, id + 1, id + 2] });
  }
  if (kept.length > 20000)
    kept = []; // churn: everything older is garbage
  return 200 * 3; // an object, a string and an array per entry
}

let winStart = process.hrtime.bigint();
let winCpu = process.cpuUsage();
let winObjects = 0;

function chunk() {
  const t0 = process.hrtime.bigint();
  while (process.hrtime.bigint() - t0 < 10000000n)
    winObjects += batch();
  const now = process.hrtime.bigint();
  if (now - winStart >= 1000000000n) {
    const secs = Number(now - winStart) / 1e9;
    const cpu = process.cpuUsage(winCpu);
    const cpuNs = (cpu.user + cpu.system) * 1000;
    fs.writeSync(out, 'win ' + Math.round(winObjects / secs) + ' ' +
                 (cpuNs / winObjects).toFixed(1) + '\n');
    winStart = now;
    winCpu = process.cpuUsage();
    winObjects = 0;
  }
  if (Date.now() < end)
    setTimeout(chunk, 1);
}
chunk();
