// ioredis with `sentinels`: find the primary of group "tc" through the Sentinels given as
// host:port arguments, write and read one key, print {"port": <primary's port>, "role": ...}.
const path = require("path");
const Redis = require(path.join(__dirname, "..", "apps", "bullmq", "node_modules", "ioredis"));

const sentinels = process.argv.slice(2).map((a) => {
  const [host, port] = a.split(":");
  return { host, port: Number(port) };
});
const r = new Redis({ sentinels, name: "tc", lazyConnect: false, maxRetriesPerRequest: 3 });
(async () => {
  await r.set("ioredis:key", "via-sentinel");
  const v = await r.get("ioredis:key");
  const role = await r.call("ROLE");
  console.log(JSON.stringify({ port: r.stream.remotePort, value: v, role: role[0] }));
  r.disconnect();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
