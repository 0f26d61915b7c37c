package tc.jbench;

import java.util.Locale;

/** One measured run (or warm-up / detail run): the same fields as twinbench's JSON runs. */
public final class Run {
    public String label, group;
    public boolean warmup, detail;
    public int threads, conns;
    public long requestsPerConn, ops, sets, gets, hits, misses, errors, timeouts;
    public double elapsedS, clientCpuS, serverCpuS = -1;
    public Hist hist = new Hist();

    public double opsPerSec() { return elapsedS > 0 ? ops / elapsedS : 0; }

    static String num(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) return "null";
        String s = String.format(Locale.ROOT, "%.6g", v);
        if (s.contains("e") || s.contains("E")) return s;
        if (s.contains(".")) s = s.replaceAll("0+$", "").replaceAll("\\.$", "");
        return s;
    }

    static String ms(long ns) { return String.format(Locale.ROOT, "%.6f", ns / 1e6); }

    static void latency(StringBuilder o, Hist h) {
        o.append("{\"min\":").append(ms(h.count > 0 ? h.min : 0));
        o.append(",\"mean\":").append(String.format(Locale.ROOT, "%.6f", h.mean() / 1e6));
        double[] ps = {50, 90, 99, 99.9, 99.99};
        String[] pn = {"p50", "p90", "p99", "p99.9", "p99.99"};
        for (int i = 0; i < ps.length; i++) o.append(",\"").append(pn[i]).append("\":").append(ms(h.percentile(ps[i])));
        o.append(",\"max\":").append(ms(h.max)).append('}');
    }

    public void json(StringBuilder o) {
        o.append("{\"label\":").append(Json.str(label)).append(",\"group\":").append(Json.str(group));
        o.append(",\"warmup\":").append(warmup).append(",\"detail\":").append(detail);
        o.append(",\"threads\":").append(threads).append(",\"connections\":").append(conns).append(",\"pipeline\":1");
        o.append(",\"requests_per_connection\":").append(requestsPerConn).append(",\"rate\":0");
        o.append(",\"ops\":").append(ops).append(",\"sets\":").append(sets).append(",\"gets\":").append(gets);
        o.append(",\"hits\":").append(hits).append(",\"misses\":").append(misses).append(",\"errors\":").append(errors);
        o.append(",\"timeouts\":").append(timeouts).append(",\"connection_errors\":0");
        o.append(",\"elapsed_s\":").append(num(elapsedS)).append(",\"ops_per_sec\":").append(num(opsPerSec()));
        o.append(",\"client_cpu_s\":").append(num(clientCpuS));
        o.append(",\"client_requests_per_cpu_s\":").append(num(clientCpuS > 0 ? ops / clientCpuS : 0));
        o.append(",\"server_cpu_s\":").append(serverCpuS >= 0 ? num(serverCpuS) : "null");
        o.append(",\"server_cpu_us_per_op\":").append(serverCpuS >= 0 && ops > 0 ? num(serverCpuS * 1e6 / ops) : "null");
        o.append(",\"latency_ms\":");
        latency(o, hist);
        o.append(",\"histogram_ns\":[");
        boolean first = true;
        for (int i = 0; i < Hist.NBUCKETS; i++) {
            if (hist.counts[i] == 0) continue;
            if (!first) o.append(',');
            o.append('[').append(Hist.bucketLo(i)).append(',').append(Hist.bucketHi(i)).append(',')
                    .append(hist.counts[i]).append(']');
            first = false;
        }
        o.append("]}");
    }
}
