package tc.jbench;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.Test;

/** The driver's JSON has twinbench's fields (bench/report.c json_run / report_json). */
public class OutputTest {
    static Run sample() {
        Run r = new Run();
        r.label = "redis/jedis_1_10";
        r.group = "seed000";
        r.threads = r.conns = 1;
        r.requestsPerConn = 3;
        for (long v : new long[] {1500, 250_000, 250_100}) r.hist.record(v);
        r.ops = r.gets = 3;
        r.hits = 2;
        r.misses = 1;
        r.elapsedS = 0.5;
        r.clientCpuS = 0.25;
        return r;
    }

    @Test
    public void runJsonHasTwinbenchFields() {
        StringBuilder o = new StringBuilder();
        sample().json(o);
        JsonObject j = JsonParser.parseString(o.toString()).getAsJsonObject();
        for (String k : new String[] {"label", "group", "warmup", "detail", "threads", "connections", "pipeline",
                "requests_per_connection", "ops", "sets", "gets", "hits", "misses", "errors", "timeouts",
                "connection_errors", "elapsed_s", "ops_per_sec", "client_cpu_s", "client_requests_per_cpu_s",
                "server_cpu_s", "server_cpu_us_per_op", "latency_ms", "histogram_ns"})
            assertTrue(k, j.has(k));
        assertEquals(6.0, j.get("ops_per_sec").getAsDouble(), 1e-9);
        assertEquals(12.0, j.get("client_requests_per_cpu_s").getAsDouble(), 1e-9);
        assertTrue(j.get("server_cpu_s").isJsonNull());
        JsonArray h = j.getAsJsonArray("histogram_ns");
        long total = 0;
        for (int i = 0; i < h.size(); i++) {
            JsonArray b = h.get(i).getAsJsonArray();
            assertTrue(b.get(0).getAsLong() <= b.get(1).getAsLong());
            total += b.get(2).getAsLong();
        }
        assertEquals(3, total);
        assertEquals(1500, h.get(0).getAsJsonArray().get(0).getAsLong()); // exact below 2048 ns
        JsonObject lat = j.getAsJsonObject("latency_ms");
        assertEquals(0.0015, lat.get("min").getAsDouble(), 1e-9);
        assertEquals(0.2501, lat.get("max").getAsDouble(), 1e-9);
    }

    @Test
    public void reportJsonHasTargetsAndText() {
        JBench b = new JBench();
        b.parse(new String[] {"--client", "jedis", "--port", "1", "--preset", "seed000", "--name", "redis/jedis"});
        b.runs.add(sample());
        Run w = sample();
        w.warmup = true;
        b.runs.add(w);
        b.out("Histogram data:\n");
        JsonObject j = JsonParser.parseString(b.json("Jedis x")).getAsJsonObject();
        assertEquals("jbench", j.get("tool").getAsString());
        assertEquals("seed000", j.get("preset").getAsString());
        JsonObject t = j.getAsJsonArray("targets").get(0).getAsJsonObject();
        assertEquals("redis/jedis", t.get("name").getAsString());
        assertEquals("redis", t.get("protocol").getAsString());
        assertEquals("Jedis x", t.getAsJsonObject("client").get("describe").getAsString());
        assertEquals(3, t.get("ops").getAsLong()); // warm-up not counted
        assertEquals(2, t.getAsJsonArray("runs").size());
        assertTrue(j.get("text").getAsString().contains("Histogram data:"));
        assertFalse(t.getAsJsonArray("runs").get(0).getAsJsonObject().get("warmup").getAsBoolean());
    }

    @Test
    public void unknownOptionsAreRejected() {
        JBench b = new JBench();
        try {
            b.parse(new String[] {"--client", "nosuch", "--port", "1"});
        } catch (IllegalArgumentException e) {
            return;
        }
        throw new AssertionError("accepted an unknown client");
    }
}
