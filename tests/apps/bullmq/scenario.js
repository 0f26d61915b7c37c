// BullMQ scenarios for tests/apps/test_bullmq.py: node scenario.js <port> <name>
// Prints one JSON line with what happened; the test compares it across redis-server and
// twincache and checks the expected values.
'use strict';
const { Queue, Worker, FlowProducer, QueueEvents } = require('bullmq');

const port = Number(process.argv[2]);
const name = process.argv[3];
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const prefix = 'tc' + name;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(cond, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await sleep(20);
  }
  return false;
}

const scenarios = {
  // a queue, a worker, 100 jobs: every job completes with its result
  async basic() {
    const q = new Queue('basic', { connection, prefix });
    let sum = 0;
    const w = new Worker('basic', async (job) => job.data.n * 2, { connection, prefix, concurrency: 5 });
    w.on('completed', (job, res) => { sum += res; });
    await q.addBulk(Array.from({ length: 50 }, (_, i) => ({ name: 'j', data: { n: i } })));
    for (let i = 50; i < 100; i++) await q.add('j', { n: i });
    const ok = await until(async () => (await q.getCompletedCount()) === 100, 20000);
    const counts = await q.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
    await w.close(); await q.close();
    return { ok, sum, counts };
  },
  // a delayed job runs no earlier than its delay
  async delayed() {
    const q = new Queue('delayed', { connection, prefix });
    let ranAfter = -1;
    const t0 = Date.now();
    const w = new Worker('delayed', async () => { ranAfter = Date.now() - t0; return 'done'; }, { connection, prefix });
    await q.add('d', {}, { delay: 600 });
    const delayedBefore = await q.getDelayedCount();
    const ok = await until(async () => (await q.getCompletedCount()) === 1, 10000);
    await w.close(); await q.close();
    return { ok, delayedBefore, notEarly: ranAfter >= 550 };
  },
  // a job that fails twice, then succeeds on its third attempt (exponential backoff)
  async retries() {
    const q = new Queue('retries', { connection, prefix });
    const stamps = [];
    const w = new Worker('retries', async (job) => {
      stamps.push(Date.now());
      if (job.attemptsMade < 2) throw new Error('boom ' + job.attemptsMade);
      return 'third time';
    }, { connection, prefix });
    const job = await q.add('r', {}, { attempts: 3, backoff: { type: 'exponential', delay: 100 } });
    const ok = await until(async () => (await q.getCompletedCount()) === 1, 10000);
    const done = await q.getJob(job.id);
    await w.close(); await q.close();
    const gaps = stamps.slice(1).map((t, i) => t - stamps[i]);
    return { ok, attemptsMade: done.attemptsMade, returnvalue: done.returnvalue,
             failedReason: done.failedReason, backoffGrows: gaps.length === 2 && gaps[0] >= 90 && gaps[1] >= 180 };
  },
  // a job that always fails ends failed after its attempts
  async failing() {
    const q = new Queue('failing', { connection, prefix });
    const w = new Worker('failing', async () => { throw new Error('always'); }, { connection, prefix });
    const job = await q.add('f', {}, { attempts: 2 });
    const ok = await until(async () => (await q.getFailedCount()) === 1, 10000);
    const j = await q.getJob(job.id);
    await w.close(); await q.close();
    return { ok, attemptsMade: j.attemptsMade, failedReason: j.failedReason, stacktraceLen: j.stacktrace.length };
  },
  // a repeatable job every 250 ms runs several times, then is removed
  async repeatable() {
    const q = new Queue('repeat', { connection, prefix });
    let runs = 0;
    const w = new Worker('repeat', async () => { runs++; }, { connection, prefix });
    await q.add('tick', {}, { repeat: { every: 250 } });
    const ok = await until(async () => runs >= 3, 10000);
    const reps = await q.getRepeatableJobs();
    for (const r of reps) await q.removeRepeatableByKey(r.key);
    const after = await q.getRepeatableJobs();
    await w.close(); await q.close();
    return { ok, repeatables: reps.length, every: reps.length ? Number(reps[0].every) : 0, after: after.length };
  },
  // a parent job with three children: the parent runs after them and sees their values
  async flow() {
    const flow = new FlowProducer({ connection, prefix });
    const order = [];
    const wc = new Worker('child', async (job) => { order.push('c' + job.data.i); return job.data.i * 10; }, { connection, prefix });
    let seen = null;
    const wp = new Worker('parent', async (job) => {
      order.push('p');
      seen = Object.values(await job.getChildrenValues()).sort((a, b) => a - b);
      return 'parent done';
    }, { connection, prefix });
    const tree = await flow.add({ name: 'p', queueName: 'parent', data: {},
      children: [0, 1, 2].map((i) => ({ name: 'c', queueName: 'child', data: { i } })) });
    const pq = new Queue('parent', { connection, prefix });
    const ok = await until(async () => (await pq.getCompletedCount()) === 1, 10000);
    const parent = await pq.getJob(tree.job.id);
    await wc.close(); await wp.close(); await flow.close(); await pq.close();
    return { ok, seen, parentLast: order[order.length - 1] === 'p', children: order.length - 1,
             returnvalue: parent.returnvalue };
  },
};

(async () => {
  const t0 = Date.now();
  const out = await scenarios[name]();
  out.ms = Date.now() - t0;
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.log(JSON.stringify({ error: String(e && e.stack || e) })); process.exit(1); });
