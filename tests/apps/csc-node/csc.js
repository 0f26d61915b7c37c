// node-redis (RESP3, clientSideCache) as a line-driven client of tests/apps/test_client_cache.py:
// it connects to 127.0.0.1:$TC_APP_PORT and answers each line of stdin with one JSON line.
//   get KEY  -> {"v": value or null, "hit": served from the client-side cache, "size": entries}
//   quit     -> exits
const readline = require('node:readline');
const { createClient } = require('redis');

async function main() {
    const port = Number(process.env.TC_APP_PORT);
    const client = createClient({
        socket: { host: '127.0.0.1', port, reconnectStrategy: false },
        RESP: 3,
        clientSideCache: { ttl: 0, maxEntries: 0, evictPolicy: 'LRU' },
    });
    client.on('error', (err) => console.log(JSON.stringify({ error: String(err) })));
    await client.connect();
    const csc = client.clientSideCache;
    console.log(JSON.stringify({ ready: true }));
    const rl = readline.createInterface({ input: process.stdin });
    for await (const line of rl) {
        const [op, key] = line.trim().split(' ');
        if (op === 'get') {
            const before = csc.stats().hitCount;
            const v = await client.get(key);
            const hit = csc.stats().hitCount > before;
            console.log(JSON.stringify({ v, hit, size: csc.size() }));
        } else {
            break;
        }
    }
    await client.close();
}

main().catch((err) => {
    console.log(JSON.stringify({ error: String(err && err.stack || err) }));
    process.exit(1);
});
