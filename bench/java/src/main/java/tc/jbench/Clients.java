package tc.jbench;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/** The client libraries: jedis, spy-text, spy-binary, xmemcached, xmemcached-binary, whalin,
 *  hazelcast. `pool` is the connection count: a JedisPool's maxTotal, xmemcached's connection
 *  pool size, Whalin's SockIOPool init/max connections, the number of spymemcached clients
 *  (one connection each, used round robin); 0 means one connection per thread for Jedis and
 *  Whalin and one connection (a single client) for the others. */
public final class Clients {
    public static final List<String> NAMES =
            List.of("jedis", "spy-text", "spy-binary", "xmemcached", "xmemcached-binary", "whalin", "hazelcast");

    static final Properties VERSIONS = new Properties();
    static {
        try (InputStream in = Clients.class.getResourceAsStream("/jbench-versions.properties")) {
            if (in != null) VERSIONS.load(in);
        } catch (Exception e) {
            // versions stay unknown
        }
    }

    public static String version(String lib) { return VERSIONS.getProperty(lib, "unknown"); }

    /** "memcache" or "redis" or "hazelcast": which server port the client speaks to. */
    public static String protocol(String client) {
        if (client.equals("jedis")) return "redis";
        if (client.equals("hazelcast")) return "hazelcast";
        return "memcache";
    }

    static final AtomicInteger POOLS = new AtomicInteger();
    static final int TIMEOUT_MS = 10_000;

    public static Client open(String client, String host, int port, int threads, int pool) throws Exception {
        switch (client) {
            case "jedis": return new JedisC(host, port, pool > 0 ? pool : threads);
            case "spy-text": return new Spy(host, port, false, pool > 0 ? pool : 1);
            case "spy-binary": return new Spy(host, port, true, pool > 0 ? pool : 1);
            case "xmemcached": return new Xmc(host, port, false, pool > 0 ? pool : 1);
            case "xmemcached-binary": return new Xmc(host, port, true, pool > 0 ? pool : 1);
            case "whalin": return new Whalin(host, port, pool > 0 ? pool : threads);
            case "hazelcast": return new Hz(host, port);
            default: throw new IllegalArgumentException("unknown client " + client + " (" + NAMES + ")");
        }
    }

    static final class JedisC implements Client {
        final redis.clients.jedis.JedisPool pool;
        final int size;

        JedisC(String host, int port, int size) {
            this.size = size;
            redis.clients.jedis.JedisPoolConfig pc = new redis.clients.jedis.JedisPoolConfig();
            pc.setMaxTotal(size);
            pc.setMaxIdle(size);
            pc.setMinIdle(0);
            pc.setJmxEnabled(false);
            pc.setTestWhileIdle(false);
            pool = new redis.clients.jedis.JedisPool(pc, host, port, TIMEOUT_MS);
        }

        public void set(String k, byte[] v) {
            try (redis.clients.jedis.Jedis j = pool.getResource()) {
                j.set(k.getBytes(), v);
            }
        }

        public byte[] get(String k) {
            try (redis.clients.jedis.Jedis j = pool.getResource()) {
                return j.get(k.getBytes());
            }
        }

        public void close() { pool.close(); }

        public String describe() {
            return "Jedis " + version("jedis") + ": JedisPool maxTotal=" + size + " maxIdle=" + size
                    + ", timeout " + TIMEOUT_MS + " ms, RESP2, byte[] keys and values, one connection borrowed per request";
        }
    }

    static final class Spy implements Client {
        final net.spy.memcached.MemcachedClient[] cs;
        final boolean binary;
        final AtomicInteger rr = new AtomicInteger();

        Spy(String host, int port, boolean binary, int n) throws Exception {
            this.binary = binary;
            cs = new net.spy.memcached.MemcachedClient[n];
            for (int i = 0; i < n; i++) {
                net.spy.memcached.ConnectionFactoryBuilder b = new net.spy.memcached.ConnectionFactoryBuilder()
                        .setProtocol(binary ? net.spy.memcached.ConnectionFactoryBuilder.Protocol.BINARY
                                : net.spy.memcached.ConnectionFactoryBuilder.Protocol.TEXT)
                        .setOpTimeout(TIMEOUT_MS)
                        .setDaemon(true);
                cs[i] = new net.spy.memcached.MemcachedClient(b.build(), List.of(new InetSocketAddress(host, port)));
            }
        }

        net.spy.memcached.MemcachedClient c() {
            return cs.length == 1 ? cs[0] : cs[Math.floorMod(rr.getAndIncrement(), cs.length)];
        }

        public void set(String k, byte[] v) throws Exception {
            if (!c().set(k, 0, v).get()) throw new IllegalStateException("set failed");
        }

        public byte[] get(String k) { return (byte[]) c().get(k); }

        public void close() { for (net.spy.memcached.MemcachedClient c : cs) c.shutdown(); }

        public String describe() {
            return "spymemcached " + version("spymemcached") + ": " + (binary ? "binary" : "text") + " protocol, "
                    + cs.length + " MemcachedClient(s) of one connection (requests of all threads multiplexed), "
                    + "SerializingTranscoder (byte[] stored raw, compression above 16384 bytes), op timeout "
                    + TIMEOUT_MS + " ms";
        }
    }

    static final class Xmc implements Client {
        final net.rubyeye.xmemcached.MemcachedClient c;
        final boolean binary;
        final int pool;

        Xmc(String host, int port, boolean binary, int pool) throws Exception {
            this.binary = binary;
            this.pool = pool;
            net.rubyeye.xmemcached.XMemcachedClientBuilder b = new net.rubyeye.xmemcached.XMemcachedClientBuilder(
                    List.of(new InetSocketAddress(host, port)));
            b.setConnectionPoolSize(pool);
            b.setOpTimeout(TIMEOUT_MS);
            if (binary) b.setCommandFactory(new net.rubyeye.xmemcached.command.BinaryCommandFactory());
            c = b.build();
        }

        public void set(String k, byte[] v) throws Exception {
            if (!c.set(k, 0, v)) throw new IllegalStateException("set failed");
        }

        public byte[] get(String k) throws Exception { return c.get(k); }

        public void close() {
            try { c.shutdown(); } catch (Exception e) { /* closing */ }
        }

        public String describe() {
            return "xmemcached " + version("xmemcached") + ": " + (binary ? "binary" : "text") + " protocol, "
                    + "connection pool size " + pool + ", SerializingTranscoder (compression threshold 16384 bytes), "
                    + "op timeout " + TIMEOUT_MS + " ms";
        }
    }

    static final class Whalin implements Client {
        final String name;
        final com.whalin.MemCached.SockIOPool pool;
        final com.whalin.MemCached.MemCachedClient c;
        final int n;

        Whalin(String host, int port, int n) {
            this.n = n;
            name = "jbench-" + POOLS.incrementAndGet();
            pool = com.whalin.MemCached.SockIOPool.getInstance(name);
            pool.setServers(new String[] {host + ":" + port});
            pool.setInitConn(Math.min(n, 20));
            pool.setMinConn(Math.min(n, 20));
            pool.setMaxConn(n);
            pool.setNagle(false);
            pool.setSocketTO(TIMEOUT_MS);
            pool.initialize();
            c = new com.whalin.MemCached.MemCachedClient(name);
        }

        public void set(String k, byte[] v) {
            if (!c.set(k, v)) throw new IllegalStateException("set failed");
        }

        public byte[] get(String k) { return (byte[]) c.get(k); }

        public void close() { pool.shutDown(); }

        public String describe() {
            return "java memcached client (Whalin/Schooner) " + version("whalin") + ": text protocol, SockIOPool "
                    + "initConn=" + Math.min(n, 20) + " maxConn=" + n + ", Nagle off, socket timeout " + TIMEOUT_MS
                    + " ms, no compression";
        }
    }

    static final class Hz implements Client {
        final com.hazelcast.core.HazelcastInstance hz;
        final com.hazelcast.map.IMap<String, byte[]> map;

        Hz(String host, int port) {
            com.hazelcast.client.config.ClientConfig cc = new com.hazelcast.client.config.ClientConfig();
            cc.setClusterName(HzMember.CLUSTER);
            cc.getNetworkConfig().addAddress(host + ":" + port);
            cc.setProperty("hazelcast.logging.type", "none");
            cc.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(15_000);
            hz = com.hazelcast.client.HazelcastClient.newHazelcastClient(cc);
            map = hz.getMap(HzMember.MAP);
        }

        public void set(String k, byte[] v) { map.set(k, v); }

        public byte[] get(String k) { return map.get(k); }

        public void close() { hz.shutdown(); }

        public String describe() {
            return "Hazelcast Java client " + version("hazelcast") + ": IMap<String, byte[]> \"" + HzMember.MAP
                    + "\" set/get, smart routing, one client (its connection shared by all threads)";
        }
    }
}
