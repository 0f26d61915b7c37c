// BullMQ's add+process cycle for bench/scripting: node bullmq_cycle.js PORT JOBS CONCURRENCY
// A producer adds JOBS jobs (addBulk, 500 at a time) while one worker with CONCURRENCY
// processes them; prints {"jobs":N,"ms":T,"jobs_per_s":R} from the first add to the last
// completion. Uses the BullMQ installed for tests/apps.
'use strict';
const path = require('path');
const { Queue, Worker } = require(path.join(__dirname, '..', 'tests', 'apps', 'bullmq', 'node_modules', 'bullmq'));

const [port, jobs, conc] = process.argv.slice(2).map(Number);
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };

(async () => {
  const q = new Queue('bench', { connection });
  await q.obliterate({ force: true }).catch(() => {});
  let done = 0, t0 = 0;
  const finished = new Promise((resolve) => {
    const w = new Worker('bench', async (job) => job.data.i, { connection, concurrency: conc });
    w.on('completed', () => { if (++done === jobs) resolve(w); });
  });
  t0 = Date.now();
  for (let i = 0; i < jobs; i += 500) {
    const n = Math.min(500, jobs - i);
    await q.addBulk(Array.from({ length: n }, (_, k) => ({ name: 'j', data: { i: i + k },
      opts: { removeOnComplete: true } })));
  }
  const w = await finished;
  const ms = Date.now() - t0;
  await w.close(); await q.close();
  console.log(JSON.stringify({ jobs, ms, jobs_per_s: Math.round(jobs * 1000 / ms) }));
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
