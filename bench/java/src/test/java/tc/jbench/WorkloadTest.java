package tc.jbench;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.Test;

public class WorkloadTest {
    @Test
    public void sequentialSlicesCoverEveryKeyOnce() {
        Workload w = new Workload();
        w.pattern = Workload.Pattern.SEQ;
        w.keyMin = 0;
        w.keyMax = 99;
        Set<Long> seen = new HashSet<>();
        long[] per = JBench.spread(7, 100);
        for (int t = 0; t < 7; t++) {
            Workload.Gen g = w.gen(1, t, 7);
            for (long i = 0; i < per[t]; i++) assertTrue(seen.add(g.nextKey()));
        }
        assertEquals(100, seen.size());
        assertEquals("key:42", w.key(42));
    }

    @Test
    public void uniformKeysStayInRangeAndAreDeterministic() {
        Workload w = new Workload();
        w.keyMin = 10;
        w.keyMax = 19;
        Workload.Gen a = w.gen(3, 0, 1), b = w.gen(3, 0, 1);
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            long k = a.nextKey();
            assertEquals(k, b.nextKey());
            assertTrue(k >= 10 && k <= 19);
            seen.add(k);
        }
        assertEquals(10, seen.size());
    }

    @Test
    public void ratioIsADeterministicInterleave() {
        Workload w = new Workload();
        w.ratioSet = 1;
        w.ratioGet = 4; // seed 002: reads:writes 4:1
        Workload.Gen g = w.gen(1, 0, 1);
        int sets = 0;
        for (int i = 0; i < 500; i++) {
            boolean s = g.nextIsSet();
            assertEquals(i % 5 == 0, s);
            if (s) sets++;
        }
        assertEquals(100, sets);
    }

    @Test
    public void fixedValueHasTheSize() {
        Workload w = new Workload();
        w.valueSize = 64;
        byte[] v = w.fixedValue();
        assertEquals(64, v.length);
        for (byte c : v) assertTrue(c >= 'a' && c <= 'z');
        assertArrayEquals(v, w.fixedValue());
    }

    @Test
    public void seed000RecordSerialisesAsTheArticle() {
        for (long n = 0; n < 200; n++) {
            Workload.Rec r = Workload.record(n);
            assertTrue(r.text.length() >= 50 && r.text.length() <= 400);
            byte[] b = r.serialize();
            // 2 longs + 4 doubles (48 bytes), writeUTF's 2-byte length, then the ASCII string
            assertEquals(48 + 2 + r.text.length(), b.length);
            Workload.Rec back = Workload.Rec.deserialize(b);
            assertEquals(n, back.id);
            assertEquals(r.stamp, back.stamp);
            assertEquals(r.d, back.d, 0);
            assertEquals(r.text, back.text);
        }
    }
}
