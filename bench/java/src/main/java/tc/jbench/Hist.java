package tc.jbench;

/** Latency histogram with twinbench's bucket layout (bench/hist.c): values in ns, exact below
 *  2048 ns, 2048 linear sub-buckets per power of two above (1/1024 precision), up to 60 s.
 *  One per thread, merged after the run, so the JSON's histogram_ns rows match the C driver's. */
public final class Hist {
    static final int SUB_BITS = 11;
    static final int SUB_COUNT = 1 << SUB_BITS;
    static final int HALF = SUB_COUNT / 2;
    static final long MAX_NS = 60_000_000_000L;
    static final int MAX_EXP = 35;
    static final int NBUCKETS = SUB_COUNT + (MAX_EXP - SUB_BITS + 1) * HALF;

    final long[] counts = new long[NBUCKETS];
    long count, min = Long.MAX_VALUE, max, clamped;
    double sum;

    static int index(long v) {
        if (v < SUB_COUNT) return (int) Math.max(v, 0);
        if (v > MAX_NS) v = MAX_NS;
        int e = 63 - Long.numberOfLeadingZeros(v);
        int shift = e - (SUB_BITS - 1);
        return SUB_COUNT + (e - SUB_BITS) * HALF + (int) ((v >>> shift) - HALF);
    }

    static long bucketLo(int idx) {
        if (idx < SUB_COUNT) return idx;
        int k = idx - SUB_COUNT;
        int e = SUB_BITS + k / HALF;
        int shift = e - (SUB_BITS - 1);
        return (long) (HALF + k % HALF) << shift;
    }

    static long bucketHi(int idx) {
        if (idx < SUB_COUNT) return idx;
        int k = idx - SUB_COUNT;
        int e = SUB_BITS + k / HALF;
        int shift = e - (SUB_BITS - 1);
        return bucketLo(idx) + (1L << shift) - 1;
    }

    public void record(long v) {
        if (v < 0) v = 0;
        if (v > MAX_NS) {
            clamped++;
            counts[NBUCKETS - 1]++;
        } else {
            counts[index(v)]++;
        }
        count++;
        sum += v;
        if (v < min) min = v;
        if (v > max) max = v;
    }

    public void merge(Hist o) {
        if (o.count == 0) return;
        for (int i = 0; i < NBUCKETS; i++) counts[i] += o.counts[i];
        count += o.count;
        sum += o.sum;
        clamped += o.clamped;
        min = Math.min(min, o.min);
        max = Math.max(max, o.max);
    }

    /** As hist_percentile: highest value of the bucket holding the ceil(p/100*count)-th value,
     *  clamped to [min, max]. */
    public long percentile(double p) {
        if (count == 0) return 0;
        if (p <= 0) return min;
        if (p >= 100) return max;
        long rank = (long) Math.ceil(p / 100.0 * count);
        if (rank < 1) rank = 1;
        long acc = 0;
        for (int i = 0; i < NBUCKETS; i++) {
            acc += counts[i];
            if (acc >= rank) {
                long v = bucketHi(i);
                return Math.max(min, Math.min(max, v));
            }
        }
        return max;
    }

    public double mean() { return count == 0 ? 0 : sum / count; }

    /** Values in [lo, hi) by bucket lowest value (hist_count_range). */
    public long countRange(long lo, long hi) {
        long n = 0;
        for (int i = 0; i < NBUCKETS; i++) {
            if (counts[i] == 0) continue;
            long b = bucketLo(i);
            if (b >= lo && b < hi) n += counts[i];
        }
        return n;
    }
}
