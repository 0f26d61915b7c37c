package tc.jbench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;

/** twinbench's JVM driver: runs a preset (seed000, seed002, seed003) through one Java client
 *  library against one server and writes twinbench's JSON (histograms included) and the
 *  article's text format.
 *
 *  java -cp 'target/jbench-1.jar:target/lib/*' tc.jbench.JBench --client jedis --port 6379 \
 *       --preset seed003 --scale 0.01 --name redis/jedis --json out.json */
public final class JBench {
    String preset = "seed003", client = "jedis", host = "127.0.0.1", name, jsonPath;
    int port = 6379, pool = 0;
    double scale = 1;
    long seed = 1, requests = -1, records = -1;
    int[] threadList;
    int ratioSet = -1, ratioGet = -1;
    int serverPid = -1;
    final StringBuilder text = new StringBuilder();
    final List<Run> runs = new ArrayList<>();
    String settings = "";
    String cmdline = "";

    static long scaled(double scale, double n) {
        double v = Math.floor(n * scale + 0.5);
        return v < 1 ? 1 : (long) v;
    }

    void out(String fmt, Object... a) {
        String s = String.format(Locale.ROOT, fmt, a);
        text.append(s);
        System.out.print(s);
        System.out.flush();
    }

    static double processCpuS() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean)
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1e9;
        return -1;
    }

    /** Server threads' run time (ns) from /proc/PID/task/*\/schedstat, as twinbench --server-pid. */
    static double serverCpuS(int pid) {
        if (pid <= 0) return -1;
        long ns = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : ds) {
                String s = Files.readString(t.resolve("schedstat")).trim();
                ns += Long.parseLong(s.split("\\s+")[0]);
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return ns / 1e9;
    }

    /** Runs `threads` threads, thread i doing perThread[i] requests of the workload. */
    Run run(Client c, Workload wl, int threads, long[] perThread, String label, String group, boolean warmup,
            boolean detail, byte[] fixed) throws InterruptedException {
        Run r = new Run();
        r.label = label;
        r.group = group;
        r.warmup = warmup;
        r.detail = detail;
        r.threads = threads;
        r.conns = threads;
        r.requestsPerConn = perThread.length > 0 ? perThread[0] : 0;
        Hist[] hs = new Hist[threads];
        long[][] cnt = new long[threads][6]; // sets gets hits misses errors timeouts
        CountDownLatch ready = new CountDownLatch(threads), go = new CountDownLatch(1), done = new CountDownLatch(threads);
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int ti = i;
            hs[i] = new Hist();
            ts[i] = new Thread(() -> {
                Workload.Gen g = wl.gen(seed + runs.size() * 7919L, ti, threads);
                Hist h = hs[ti];
                long[] k = cnt[ti];
                ready.countDown();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (long n = 0; n < perThread[ti]; n++) {
                    long key = g.nextKey();
                    boolean set = g.nextIsSet();
                    String ks = wl.key(key);
                    long t0 = System.nanoTime();
                    try {
                        if (set) {
                            byte[] v = wl.record ? Workload.record(key).serialize() : fixed;
                            c.set(ks, v);
                            k[0]++;
                        } else {
                            byte[] v = c.get(ks);
                            k[1]++;
                            if (v != null) {
                                k[2]++;
                                if (wl.record) Workload.Rec.deserialize(v);
                            } else {
                                k[3]++;
                            }
                        }
                    } catch (Exception e) {
                        Throwable x = e;
                        boolean to = false;
                        for (; x != null; x = x.getCause())
                            if (x instanceof TimeoutException || x.getClass().getSimpleName().contains("Timeout")) to = true;
                        k[to ? 5 : 4]++;
                    }
                    h.record(System.nanoTime() - t0);
                }
                done.countDown();
            }, "jbench-" + i);
            ts[i].setDaemon(true);
            ts[i].start();
        }
        ready.await();
        double cpu0 = processCpuS(), s0 = serverCpuS(serverPid);
        long t0 = System.nanoTime();
        go.countDown();
        done.await();
        r.elapsedS = (System.nanoTime() - t0) / 1e9;
        double cpu1 = processCpuS(), s1 = serverCpuS(serverPid);
        r.clientCpuS = cpu0 >= 0 ? cpu1 - cpu0 : -1;
        r.serverCpuS = s0 >= 0 && s1 >= 0 ? s1 - s0 : -1;
        for (int i = 0; i < threads; i++) {
            r.hist.merge(hs[i]);
            r.sets += cnt[i][0];
            r.gets += cnt[i][1];
            r.hits += cnt[i][2];
            r.misses += cnt[i][3];
            r.errors += cnt[i][4];
            r.timeouts += cnt[i][5];
        }
        r.ops = r.sets + r.gets;
        runs.add(r);
        if (r.errors + r.timeouts > 0)
            System.err.printf("jbench: %s %s: %d errors, %d timeouts%n", name, label, r.errors, r.timeouts);
        return r;
    }

    static long[] even(int threads, long each) {
        long[] p = new long[threads];
        java.util.Arrays.fill(p, each);
        return p;
    }

    static long[] spread(int threads, long total) {
        long[] p = new long[threads];
        for (int i = 0; i < threads; i++) p[i] = total / threads + (i < total % threads ? 1 : 0);
        return p;
    }

    /** Writes every key once (sequential slices, 4 threads), not reported. */
    void preload(Client c, Workload wl, byte[] fixed) throws InterruptedException {
        Workload p = copy(wl);
        p.pattern = Workload.Pattern.SEQ;
        p.ratioSet = 1;
        p.ratioGet = 0;
        long n = wl.keyMax - wl.keyMin + 1;
        long t0 = System.nanoTime();
        Run r = run(c, p, 4, spread(4, n), "preload", "preload", true, true, fixed);
        runs.remove(r);
        System.err.printf(Locale.ROOT, "jbench: %s: preloaded %d keys in %.2f s (%d errors)%n", name, r.ops,
                (System.nanoTime() - t0) / 1e9, r.errors + r.timeouts);
    }

    static Workload copy(Workload w) {
        Workload c = new Workload();
        c.prefix = w.prefix;
        c.keyMin = w.keyMin;
        c.keyMax = w.keyMax;
        c.pattern = w.pattern;
        c.ratioSet = w.ratioSet;
        c.ratioGet = w.ratioGet;
        c.valueSize = w.valueSize;
        c.record = w.record;
        return c;
    }

    int[] threads(int[] def) { return threadList != null ? threadList : def; }

    void seed000(Client c) throws InterruptedException {
        int[] thr = threads(new int[] {1, 10, 50, 100, 500});
        long nrec = records > 0 ? records : scaled(scale, 1e6);
        Workload wl = new Workload();
        wl.keyMin = 0;
        wl.keyMax = nrec - 1;
        wl.record = true;
        wl.ratioSet = 0;
        wl.ratioGet = 1;
        wl.pattern = Workload.Pattern.UNIFORM;
        out("# jbench preset seed000 (%s): %d records (2 longs + 4 doubles + 50..400 chars, DataOutputStream) "
                + "preloaded, synchronous reads (each read deserialised); the whole sequence run twice, the second counted\n\n",
                name, nrec);
        preload(c, wl, null);
        for (int pass = 0; pass < 2; pass++) {
            for (int t : thr) {
                long per = requests > 0 ? requests : scaled(scale, t == 1 ? 10000 : 100);
                String lab = String.format("%s_%d_%d", name, t, per);
                Run r = run(c, wl, t, even(t, per), pass == 0 ? "warm-up " + lab : lab, "seed000", pass == 0, false, null);
                if (pass == 1) line(r);
            }
        }
    }

    void line(Run r) {
        out("%-28s %10.0f ops/s  p50 %.3f  p99 %.3f  max %.3f ms  hits %d misses %d errors %d%n", r.label,
                r.opsPerSec(), r.hist.percentile(50) / 1e6, r.hist.percentile(99) / 1e6, r.hist.max / 1e6, r.hits,
                r.misses, r.errors + r.timeouts);
    }

    void seed002(Client c) throws InterruptedException {
        int[] thr = threads(new int[] {1, 10, 50, 100, 300});
        long repeats = requests > 0 ? requests : scaled(scale, 40000);
        Workload wl = new Workload();
        wl.valueSize = 64;
        wl.ratioSet = ratioSet >= 0 ? ratioSet : 1;
        wl.ratioGet = ratioGet >= 0 ? ratioGet : 4;
        wl.keyMin = 0;
        wl.keyMax = 9999;
        byte[] v = wl.fixedValue();
        out("%s:\n", name);
        preload(c, wl, v);
        out("warm up\n");
        run(c, wl, 10, even(10, scaled(scale, 1000)), "warm-up", "seed002", true, false, v);
        for (int t : thr) {
            Run r = run(c, wl, t, even(t, repeats), "threads=" + t, "seed002", false, false, v);
            long fail = r.errors + r.timeouts;
            double rate = r.hits + r.misses > 0 ? (double) r.hits / (r.hits + r.misses) : 0;
            out("threads=%d,repeats=%d,valueLength=%d,tps=%.0f,miss=%d,fail=%d,hit=%d,all=%d,hitRate=%.2f%n", t,
                    repeats, wl.valueSize, r.opsPerSec(), r.misses, fail, r.hits, r.ops, rate);
        }
    }

    void seed003(Client c) throws InterruptedException {
        int[] thr = threads(new int[] {1, 2, 4, 8, 16, 32, 64, 128});
        long n = requests > 0 ? requests : scaled(scale, 131072);
        Workload wl = new Workload();
        wl.valueSize = 16;
        wl.pattern = Workload.Pattern.SEQ;
        wl.keyMin = 0;
        wl.keyMax = n - 1;
        byte[] v = wl.fixedValue();
        Workload w = copy(wl), rd = copy(wl);
        w.ratioSet = 1;
        w.ratioGet = 0;
        rd.ratioSet = 0;
        rd.ratioGet = 1;
        // JIT warm-up (the C driver has none): one pass of min(n, 10000) writes and reads, not counted
        long wn = Math.min(n, 10000);
        run(c, w, 1, even(1, wn), "warm-up write", "seed003", true, false, v);
        run(c, rd, 1, even(1, wn), "warm-up read", "seed003", true, false, v);
        double[] us = new double[thr.length];
        for (int i = 0; i < thr.length; i++) {
            int t = thr[i];
            Run bw = run(c, w, t, spread(t, n), t + " thread write", "seed003", false, true, v);
            Run br = run(c, rd, t, spread(t, n), t + " thread read", "seed003", false, true, v);
            us[i] = (bw.elapsedS + br.elapsedS) * 1e6;
            Run comb = new Run();
            comb.label = t + " thread";
            comb.group = "seed003";
            comb.threads = comb.conns = t;
            comb.hist.merge(bw.hist);
            comb.hist.merge(br.hist);
            comb.ops = bw.ops + br.ops;
            comb.sets = bw.sets;
            comb.gets = br.gets;
            comb.hits = br.hits;
            comb.misses = br.misses;
            comb.errors = bw.errors + br.errors;
            comb.timeouts = bw.timeouts + br.timeouts;
            comb.elapsedS = bw.elapsedS + br.elapsedS;
            comb.clientCpuS = bw.clientCpuS + br.clientCpuS;
            comb.serverCpuS = bw.serverCpuS >= 0 && br.serverCpuS >= 0 ? bw.serverCpuS + br.serverCpuS : -1;
            runs.add(comb);
        }
        out("# jbench preset seed003: a %d-byte string written then read %d times, elapsed microseconds (write + read)\n\n",
                wl.valueSize, n);
        out("|  | %s |\n|---|---|\n", name);
        double s = 0;
        for (int i = 0; i < thr.length; i++) {
            out("| %d thread | %.0f |\n", thr[i], us[i]);
            s += us[i];
        }
        out("| Ortalama | %.0f |\n", s / thr.length);
    }

    String json(String describe) {
        StringBuilder o = new StringBuilder(1 << 16);
        o.append("{\"tool\":\"jbench\",\"version\":\"0.1\",\"command_line\":").append(Json.str(cmdline));
        o.append(",\"preset\":").append(Json.str(preset)).append(",\"scale\":").append(Run.num(scale));
        o.append(",\"timestamp\":").append(System.currentTimeMillis() / 1000);
        o.append(",\"settings\":").append(Json.str(settings));
        o.append(",\"machine\":{\"java\":").append(Json.str(System.getProperty("java.vm.name") + " "
                + System.getProperty("java.version"))).append(",\"cpu_cores\":")
                .append(Json.str(String.valueOf(Runtime.getRuntime().availableProcessors()))).append('}');
        String proto = Clients.protocol(client);
        o.append(",\"targets\":[{\"name\":").append(Json.str(name));
        o.append(",\"url\":").append(Json.str(proto + "://" + host + ":" + port));
        o.append(",\"protocol\":").append(Json.str(proto)).append(",\"hosts\":[").append(Json.str(host + ":" + port));
        o.append("],\"server_info\":null,\"driver\":\"jvm\",\"client\":{\"name\":").append(Json.str(client));
        o.append(",\"describe\":").append(Json.str(describe)).append(",\"pool\":").append(pool).append('}');
        Hist h = new Hist();
        long ops = 0, hits = 0, misses = 0, errors = 0, timeouts = 0;
        double el = 0;
        for (Run r : runs) {
            if (r.warmup || r.detail) continue;
            h.merge(r.hist);
            ops += r.ops;
            el += r.elapsedS;
            hits += r.hits;
            misses += r.misses;
            errors += r.errors;
            timeouts += r.timeouts;
        }
        o.append(",\"ops\":").append(ops).append(",\"ops_per_sec\":").append(Run.num(el > 0 ? ops / el : 0));
        o.append(",\"hits\":").append(hits).append(",\"misses\":").append(misses).append(",\"errors\":").append(errors);
        o.append(",\"timeouts\":").append(timeouts).append(",\"latency_ms\":");
        Run.latency(o, h);
        o.append(",\"runs\":[");
        for (int i = 0; i < runs.size(); i++) {
            if (i > 0) o.append(',');
            runs.get(i).json(o);
        }
        o.append("]}],\"text\":").append(Json.str(text.toString())).append("}\n");
        return o.toString();
    }

    static int[] ints(String s) {
        String[] p = s.split(",");
        int[] r = new int[p.length];
        for (int i = 0; i < p.length; i++) r[i] = Integer.parseInt(p[i].trim());
        return r;
    }

    static final String USAGE = "usage: jbench --client " + String.join("|", Clients.NAMES)
            + " [--host H] --port P --preset seed000|seed002|seed003 [--scale F] [--name NAME] [--json FILE]\n"
            + "       [--pool N] [--threads-list 1,10,..] [--requests N] [--records N] [--seed N] [--server-pid PID]\n"
            + "       [--ratio SET:GET (seed002)]\n";

    int parse(String[] a) {
        for (int i = 0; i < a.length; i++) {
            String k = a[i];
            if (k.equals("-h") || k.equals("--help")) {
                System.out.print(USAGE);
                return 1;
            }
            if (i + 1 >= a.length) throw new IllegalArgumentException("missing value for " + k);
            String v = a[++i];
            switch (k) {
                case "--client": client = v; break;
                case "--host": host = v; break;
                case "--port": port = Integer.parseInt(v); break;
                case "--preset": preset = v; break;
                case "--scale": scale = Double.parseDouble(v); break;
                case "--name": name = v; break;
                case "--json": jsonPath = v; break;
                case "--pool": pool = Integer.parseInt(v); break;
                case "--threads-list": threadList = ints(v); break;
                case "--requests": requests = Long.parseLong(v); break;
                case "--records": records = Long.parseLong(v); break;
                case "--seed": seed = Long.parseLong(v); break;
                case "--ratio": {
                    String[] p = v.split(":");
                    ratioSet = Integer.parseInt(p[0]);
                    ratioGet = Integer.parseInt(p[1]);
                    break;
                }
                case "--server-pid": serverPid = Integer.parseInt(v); break;
                default: throw new IllegalArgumentException("unknown option " + k);
            }
        }
        if (!Clients.NAMES.contains(client)) throw new IllegalArgumentException("unknown client " + client);
        if (!List.of("seed000", "seed002", "seed003").contains(preset))
            throw new IllegalArgumentException("unknown preset " + preset + " (seed000, seed002, seed003)");
        if (name == null) name = client;
        return 0;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SLF4JLogger");
        JBench b = new JBench();
        try {
            if (b.parse(args) != 0) return;
        } catch (IllegalArgumentException e) {
            System.err.println("jbench: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
        }
        b.cmdline = "jbench " + String.join(" ", args);
        int maxThreads = b.preset.equals("seed000") ? 500 : b.preset.equals("seed002") ? 300 : 128;
        if (b.threadList != null) maxThreads = java.util.Arrays.stream(b.threadList).max().orElse(1);
        int rc = 0;
        try (Client c = Clients.open(b.client, b.host, b.port, maxThreads, b.pool)) {
            String d = c.describe();
            b.settings = "client: " + d + "\njava: " + System.getProperty("java.version") + " "
                    + ManagementFactory.getRuntimeMXBean().getInputArguments() + "\npreset: " + b.preset
                    + " scale " + b.scale + "\nkeys: key:N; values: " + (b.preset.equals("seed000")
                    ? "seed-000 record (DataOutputStream)" : b.preset.equals("seed002") ? "64 bytes" : "16 bytes");
            System.err.println("jbench: " + d);
            switch (b.preset) {
                case "seed000": b.seed000(c); break;
                case "seed002": b.seed002(c); break;
                default: b.seed003(c); break;
            }
            for (Run r : b.runs) if (!r.warmup && r.ops > 0 && r.errors + r.timeouts >= r.ops) rc = 1;
            if (b.jsonPath != null)
                Files.writeString(Path.of(b.jsonPath), b.json(d), StandardCharsets.UTF_8);
        }
        System.out.flush();
        System.exit(rc);
    }
}
