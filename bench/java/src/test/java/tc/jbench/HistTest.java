package tc.jbench;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class HistTest {
    @Test
    public void bucketLayoutMatchesTwinbench() {
        // exact below 2048 ns
        assertEquals(0, Hist.index(0));
        assertEquals(2047, Hist.index(2047));
        assertEquals(2047, Hist.bucketLo(2047));
        // 2048..4095: width 2 (1/1024 precision), as hist.c
        assertEquals(2048, Hist.index(2048));
        assertEquals(2048, Hist.index(2049));
        assertEquals(2049, Hist.index(2050));
        assertEquals(2048, Hist.bucketLo(2048));
        assertEquals(2049, Hist.bucketHi(2048));
        assertTrue(Hist.index(Hist.MAX_NS) < Hist.NBUCKETS);
        assertEquals(2048 + (35 - 11 + 1) * 1024, Hist.NBUCKETS);
        for (long v : new long[] {1, 100, 2047, 2048, 4095, 4096, 123456, 1_000_000, 987_654_321L, 59_999_999_999L}) {
            int i = Hist.index(v);
            assertTrue(v + " in its bucket", Hist.bucketLo(i) <= v && v <= Hist.bucketHi(i));
            assertTrue("1/1024 precision at " + v, Hist.bucketHi(i) - Hist.bucketLo(i) <= Math.max(0, v / 1024));
        }
    }

    @Test
    public void percentilesAndRanges() {
        Hist h = new Hist();
        for (long v = 1; v <= 1000; v++) h.record(v * 1000); // 1..1000 us
        assertEquals(1000, h.count);
        assertEquals(1000, h.min);
        assertEquals(1_000_000, h.max);
        long p50 = h.percentile(50);
        assertTrue("p50 " + p50, p50 >= 500_000 && p50 <= 500_000 + 500_000 / 1024 + 1);
        assertEquals(1_000_000, h.percentile(100));
        assertEquals(1000, h.percentile(0));
        // 1000..25000 ns: 25000 lies in the bucket 24992..25007, counted by its low end (hist_count_range)
        assertEquals(25, h.countRange(0, 25_000));
        assertEquals(24, h.countRange(0, 24_992));
        Hist g = new Hist();
        g.record(5);
        g.record(Hist.MAX_NS + 1);
        assertEquals(1, g.clamped);
        h.merge(g);
        assertEquals(1002, h.count);
        assertEquals(5, h.min);
    }
}
