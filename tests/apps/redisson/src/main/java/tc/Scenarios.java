package tc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.redisson.Redisson;
import org.redisson.api.RAtomicLong;
import org.redisson.api.RBucket;
import org.redisson.api.RLock;
import org.redisson.api.RMapCache;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Redisson's RLock and RMapCache against one server: java -cp ... tc.Scenarios PORT NAME.
 *  Prints one JSON line. */
public final class Scenarios {
    private static String json(Map<String, Object> m) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (b.length() > 1) b.append(',');
            b.append('"').append(e.getKey()).append("\":");
            Object v = e.getValue();
            if (v instanceof String) b.append('"').append(v).append('"');
            else b.append(v);
        }
        return b.append('}').toString();
    }

    static Map<String, Object> lock(RedissonClient r) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        RLock l = r.getLock("lock:a");
        l.lock();
        out.put("held", l.isHeldByCurrentThread());
        l.lock(); // reentrant
        out.put("holds", l.getHoldCount());
        l.unlock();
        out.put("holdsAfterOne", l.getHoldCount());
        l.unlock();
        out.put("locked", l.isLocked());
        // tryLock with a lease: it expires by itself
        out.put("tryLease", l.tryLock(1, 300, TimeUnit.MILLISECONDS));
        Thread.sleep(600);
        out.put("expired", !l.isLocked());
        // another thread cannot take it while held
        l.lock();
        final boolean[] other = new boolean[1];
        Thread t = new Thread(() -> {
            try { other[0] = r.getLock("lock:a").tryLock(100, TimeUnit.MILLISECONDS); }
            catch (InterruptedException e) { other[0] = true; }
        });
        t.start();
        t.join();
        out.put("otherGot", other[0]);
        l.unlock();
        // contention: 8 threads x 200 increments of a plain value under the lock
        RBucket<Integer> counter = r.getBucket("counter");
        counter.set(0);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Thread w = new Thread(() -> {
                RLock ll = r.getLock("lock:c");
                for (int j = 0; j < 200; j++) {
                    ll.lock();
                    try { counter.set(counter.get() + 1); } finally { ll.unlock(); }
                }
            });
            ts.add(w);
            w.start();
        }
        for (Thread w : ts) w.join();
        out.put("counter", counter.get());
        RAtomicLong al = r.getAtomicLong("al");
        out.put("atomic", al.incrementAndGet() + al.addAndGet(10));
        return out;
    }

    static Map<String, Object> mapcache(RedissonClient r) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        RMapCache<String, String> m = r.getMapCache("mc");
        m.put("forever", "v1");
        m.put("short", "v2", 400, TimeUnit.MILLISECONDS);
        m.put("idle", "v3", 0, TimeUnit.MILLISECONDS, 300, TimeUnit.MILLISECONDS);
        out.put("size", m.size());
        out.put("short", m.get("short"));
        out.put("putIfAbsent", String.valueOf(m.putIfAbsent("forever", "x")));
        Thread.sleep(800);
        out.put("shortAfter", String.valueOf(m.get("short")));
        out.put("idleAfter", String.valueOf(m.get("idle")));
        out.put("foreverAfter", m.get("forever"));
        out.put("sizeAfter", m.size());
        out.put("removed", m.remove("forever"));
        out.put("fastPut", m.fastPut("k", "v", 10, TimeUnit.SECONDS));
        out.put("ttlKnown", m.remainTimeToLive("k") > 0);
        return out;
    }

    public static void main(String[] a) throws Exception {
        Config cfg = new Config();
        cfg.useSingleServer().setAddress("redis://127.0.0.1:" + a[0]).setConnectionMinimumIdleSize(2)
           .setConnectionPoolSize(8);
        RedissonClient r = Redisson.create(cfg);
        try {
            Map<String, Object> out = a[1].equals("lock") ? lock(r) : mapcache(r);
            System.out.println(json(out));
        } finally {
            r.shutdown();
        }
    }
}
