package tc;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import net.rubyeye.xmemcached.CASOperation;
import net.rubyeye.xmemcached.Counter;
import net.rubyeye.xmemcached.GetsResponse;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.auth.AuthInfo;
import net.rubyeye.xmemcached.command.BinaryCommandFactory;
import net.rubyeye.xmemcached.command.TextCommandFactory;
import net.rubyeye.xmemcached.transcoders.SerializingTranscoder;

/**
 * xmemcached scenarios for tests/mc/test_xmemcached.py. Each argument is one scenario,
 * MODE:PORT[:USER:PASSWORD] with MODE binary, text or badauth (binary with a wrong password);
 * every scenario prints one JSON line {"scenario": MODE, "steps": {step: outcome, ...}}. The
 * outcomes are the client's results (values, booleans, exception class and message), never a
 * server's CAS numbers or timings, so memcached's and twincache's lines compare equal.
 */
public final class XmemScenario {
    private final Map<String, Object> steps = new LinkedHashMap<>();

    private void step(String name, Callable<Object> f) {
        Object v;
        try {
            v = f.call();
        } catch (Exception e) {
            String msg = e.getMessage() == null ? "" : e.getMessage();
            v = "ERR " + e.getClass().getSimpleName() + ": " + msg;
        }
        steps.put(name, v);
    }

    private static MemcachedClient client(String mode, int port, String user, String pass)
            throws Exception {
        /* xmemcached finds a connection's AuthInfo by the host name of its peer address,
         * which it resolves: 127.0.0.1's name (localhost), not the literal, finds it */
        String host = java.net.InetAddress.getByName("127.0.0.1").getHostName();
        InetSocketAddress addr = new InetSocketAddress(host, port);
        XMemcachedClientBuilder b = new XMemcachedClientBuilder(List.of(addr));
        b.setCommandFactory(mode.equals("text") ? new TextCommandFactory()
                                                : new BinaryCommandFactory());
        if (user != null)
            b.addAuthInfo(addr, AuthInfo.plain(user, pass));
        b.setConnectionPoolSize(1);
        b.setOpTimeout(mode.equals("badauth") ? 1500 : 10000);
        b.setConnectTimeout(5000);
        b.setEnableHealSession(false);
        SerializingTranscoder tr = new SerializingTranscoder(4 << 20);
        tr.setCompressionThreshold(Integer.MAX_VALUE); /* the values go to the server as made */
        b.setTranscoder(tr);
        return b.build();
    }

    private static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /* Refused: which exception says so (no connection, auth failed, a timeout) depends on
     * where xmemcached's reconnect and auth threads are, so only the refusal is kept. */
    private void badauth(MemcachedClient c) {
        step("set", () -> refused(() -> c.set("ba:1", 0, "x")));
        step("get", () -> refused(() -> c.get("ba:1")));
    }

    private static Object refused(Callable<Object> f) {
        try {
            return "served: " + f.call();
        } catch (Exception e) {
            return "refused";
        }
    }

    private void common(MemcachedClient c, boolean binary) {
        final int n = 300;
        step("flush", () -> { c.flushAll(); return true; });
        step("set", () -> {
            int ok = 0;
            for (int i = 0; i < n; i++)
                ok += c.set("x:" + i, 3600, "value-" + i) ? 1 : 0;
            return ok;
        });
        step("get", () -> c.get("x:7"));
        step("get miss", () -> String.valueOf((Object) c.get("nope")));
        step("getMulti", () -> {
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < n; i++)
                keys.add("x:" + i);
            keys.add("nope:1");
            keys.add("nope:2");
            Map<String, Object> m = c.get(keys);
            int good = 0;
            for (int i = 0; i < n; i++)
                good += ("value-" + i).equals(m.get("x:" + i)) ? 1 : 0;
            return m.size() + " entries, " + good + " right, missing in: " + m.containsKey("nope:1");
        });
        step("getsMulti", () -> {
            List<String> keys = List.of("x:1", "x:2", "x:3", "nope");
            Map<String, GetsResponse<Object>> m = c.gets(keys);
            Map<String, Object> r = new TreeMap<>();
            java.util.Set<Long> cas = new java.util.HashSet<>();
            for (Map.Entry<String, GetsResponse<Object>> e : m.entrySet()) {
                r.put(e.getKey(), e.getValue().getValue());
                cas.add(e.getValue().getCas());
            }
            r.put("distinct cas", cas.size());
            return r;
        });
        step("cas", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            GetsResponse<Object> g = c.gets("x:1");
            r.put("gets", g.getValue());
            r.put("cas nonzero", g.getCas() != 0);
            r.put("cas ok", c.cas("x:1", 0, "changed", g.getCas()));
            r.put("cas conflict", c.cas("x:1", 0, "again", g.getCas()));
            r.put("value", c.get("x:1"));
            GetsResponse<Object> g2 = c.gets("x:1");
            r.put("cas changed", g2.getCas() != g.getCas());
            r.put("cas missing", c.cas("nope:cas", 0, "x", 12345L));
            r.put("cas op", c.cas("x:2", 0, new CASOperation<Object>() {
                public int getMaxTries() { return 3; }
                public Object getNewValue(long cas, Object old) { return old + "!"; }
            }));
            r.put("after cas op", c.get("x:2"));
            return r;
        });
        step("incr decr", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("incr init", c.incr("ctr", 5, 10));
            r.put("incr", c.incr("ctr", 5, 10));
            r.put("decr", c.decr("ctr", 3, 0));
            r.put("decr floor", c.decr("ctr", 100, 0));
            r.put("decr init", c.decr("ctr2", 1, 7));
            r.put("incr 1arg", c.incr("ctr3", 2));
            r.put("get ctr", c.get("ctr"));
            c.set("big", 0, "18446744073709551615");
            r.put("incr wrap", c.incr("big", 2));
            c.set("text", 0, "abc");
            try {
                r.put("incr text", c.incr("text", 1));
            } catch (Exception e) {
                r.put("incr text", "ERR " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            Counter k = c.getCounter("counter", 0);
            r.put("counter inc", k.incrementAndGet());
            r.put("counter add", k.addAndGet(41));
            r.put("counter dec", k.decrementAndGet());
            return r;
        });
        step("touch", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            long before = c.gets("x:4").getCas();
            r.put("touch", c.touch("x:4", 100));
            r.put("touch miss", c.touch("nope", 100));
            r.put("touch keeps cas", c.gets("x:4").getCas() == before);
            r.put("get and touch", c.getAndTouch("x:5", 100));
            r.put("get and touch miss", String.valueOf((Object) c.getAndTouch("nope", 100)));
            /* an absolute time in the past expires the item at once */
            r.put("touch past", c.touch("x:6", 1000000000));
            r.put("after touch past", String.valueOf((Object) c.get("x:6")));
            r.put("gat past", c.getAndTouch("x:8", 1000000000));
            r.put("after gat past", String.valueOf((Object) c.get("x:8")));
            return r;
        });
        step("delete", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("delete", c.delete("x:9"));
            r.put("delete miss", c.delete("x:9"));
            r.put("get deleted", String.valueOf((Object) c.get("x:9")));
            if (binary) {
                long cas = c.gets("x:10").getCas();
                r.put("delete cas conflict", c.delete("x:10", cas + 1, 5000));
                r.put("delete cas", c.delete("x:10", cas, 5000));
            }
            return r;
        });
        step("append prepend", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("append", c.append("x:11", "+"));
            r.put("prepend", c.prepend("x:11", "-"));
            r.put("value", c.get("x:11"));
            r.put("append miss", c.append("nope", "+"));
            r.put("prepend miss", c.prepend("nope", "+"));
            return r;
        });
        step("add replace", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("add existing", c.add("x:12", 0, "x"));
            r.put("add new", c.add("new", 0, "n"));
            r.put("replace miss", c.replace("nope", 0, "x"));
            r.put("replace", c.replace("x:12", 0, "r"));
            r.put("value", c.get("x:12"));
            return r;
        });
        step("noreply", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            c.setWithNoReply("nr:1", 0, "a");
            c.addWithNoReply("nr:1", 0, "b");
            c.appendWithNoReply("nr:1", "c");
            c.setWithNoReply("nr:2", 0, "5");
            c.incrWithNoReply("nr:2", 3);
            c.deleteWithNoReply("x:13");
            r.put("nr:1", c.get("nr:1"));
            r.put("nr:2", c.get("nr:2"));
            r.put("x:13", String.valueOf((Object) c.get("x:13")));
            return r;
        });
        step("types", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            HashMap<String, Integer> map = new HashMap<>();
            map.put("a", 1);
            c.set("t:int", 0, 42);
            c.set("t:long", 0, 1L << 40);
            c.set("t:bool", 0, true);
            c.set("t:bytes", 0, new byte[] {0, 1, 2, (byte) 255});
            c.set("t:map", 0, map);
            r.put("int", c.get("t:int"));
            r.put("long", c.get("t:long"));
            r.put("bool", c.get("t:bool"));
            r.put("bytes", java.util.Arrays.toString((byte[]) c.get("t:bytes")));
            r.put("map", String.valueOf((Object) c.get("t:map")));
            return r;
        });
        step("large", () -> {
            Map<String, Object> r = new LinkedHashMap<>();
            byte[] v = randomBytes(1000000, 1);
            r.put("set 1000000", c.set("large", 0, v));
            r.put("get 1000000", java.util.Arrays.equals(v, (byte[]) c.get("large")));
            try {
                r.put("set 2000000", c.set("large", 0, randomBytes(2000000, 2)));
            } catch (Exception e) {
                r.put("set 2000000", "ERR " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            r.put("after too large", String.valueOf((Object) c.get("large")));
            return r;
        });
        step("stats", () -> {
            Map<String, String> st = c.getStats().values().iterator().next();
            Map<String, Object> r = new TreeMap<>();
            for (String k : new String[] {"curr_items", "cmd_get", "cmd_touch", "version",
                                          "incr_hits", "decr_misses", "pid"})
                r.put(k, st.containsKey(k));
            return r;
        });
        step("version", () -> c.getVersions().size());
        step("flush all", () -> {
            c.flushAll();
            return String.valueOf((Object) c.get("x:1"));
        });
    }

    public static void main(String[] args) throws Exception {
        for (String spec : args) {
            String[] p = spec.split(":", 4); /* a password may hold colons */
            String mode = p[0];
            int port = Integer.parseInt(p[1]);
            String user = p.length > 3 ? p[2] : null, pass = p.length > 3 ? p[3] : null;
            XmemScenario s = new XmemScenario();
            MemcachedClient c = client(mode, port, user, pass);
            try {
                if (mode.equals("badauth"))
                    s.badauth(c);
                else
                    s.common(c, mode.equals("binary"));
            } finally {
                c.shutdown();
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("scenario", mode + (user != null ? "+sasl" : ""));
            out.put("steps", s.steps);
            System.out.println(Json.of(out));
        }
        System.exit(0); /* xmemcached's reconnect threads would keep a refused client alive */
    }

    /** A JSON writer for the outcomes: maps, strings, numbers, booleans, null. */
    static final class Json {
        static String of(Object o) {
            StringBuilder sb = new StringBuilder();
            write(sb, o);
            return sb.toString();
        }

        private static void write(StringBuilder sb, Object o) {
            if (o == null) {
                sb.append("null");
            } else if (o instanceof Map<?, ?> m) {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first)
                        sb.append(',');
                    first = false;
                    write(sb, String.valueOf(e.getKey()));
                    sb.append(':');
                    write(sb, e.getValue());
                }
                sb.append('}');
            } else if (o instanceof Boolean || o instanceof Integer || o instanceof Long) {
                sb.append(o);
            } else {
                String s = o.toString();
                sb.append('"');
                for (char ch : s.toCharArray()) {
                    if (ch == '"' || ch == '\\')
                        sb.append('\\').append(ch);
                    else if (ch < 0x20)
                        sb.append(String.format("\\u%04x", (int) ch));
                    else
                        sb.append(ch);
                }
                sb.append('"');
            }
        }
    }
}
