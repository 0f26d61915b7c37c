package tc.jbench;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** Key and value rules of twinbench (bench/workload.c): keys "key:" + number; sequential keys
 *  give each thread its own slice; uniform keys from a per-thread splitmix64 stream; SET:GET mix
 *  as a deterministic interleave (request i is a SET when i % (s+g) < s); fixed-size values of
 *  letters; seed 000's record (2 longs + 4 doubles + a 50..400 character string). */
public final class Workload {
    public enum Pattern { SEQ, UNIFORM }

    public String prefix = "key:";
    public long keyMin = 0, keyMax = 9999;
    public Pattern pattern = Pattern.UNIFORM;
    public int ratioSet = 1, ratioGet = 10;
    public int valueSize = 32;
    public boolean record;               // seed 000's record instead of a fixed-size value

    public static long splitmix(long[] s) {
        long z = (s[0] += 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    public String key(long n) { return prefix + n; }

    /** Per-thread generator state. */
    public final class Gen {
        final long[] rng = new long[1];
        long seqNext, seqLo, seqHi, nreq;

        Gen(long seed, int thread, int nthreads) {
            rng[0] = seed * 0x100000001B3L + thread * 7919L + 1;
            long range = keyMax - keyMin + 1;
            long per = range / nthreads, rem = range % nthreads;
            seqLo = keyMin + thread * per + Math.min(thread, rem);
            seqHi = seqLo + per + (thread < rem ? 1 : 0) - 1;
            if (seqHi < seqLo) seqHi = seqLo;
            seqNext = seqLo;
        }

        public long nextKey() {
            if (pattern == Pattern.SEQ) {
                long k = seqNext++;
                if (seqNext > seqHi) seqNext = seqLo;
                return k;
            }
            long range = keyMax - keyMin + 1;
            return keyMin + Long.remainderUnsigned(splitmix(rng), range);
        }

        public boolean nextIsSet() {
            int tot = ratioSet + ratioGet;
            long i = nreq++;
            return tot != 0 && (i % tot) < ratioSet;
        }

        public long rand() { return splitmix(rng); }
    }

    public Gen gen(long seed, int thread, int nthreads) { return new Gen(seed, thread, nthreads); }

    /** Fixed-size value of letters (the same bytes for every request, as twinbench's pool). */
    public byte[] fixedValue() {
        long[] s = {12345};
        byte[] v = new byte[valueSize];
        for (int i = 0; i < v.length; i++) v[i] = (byte) ('a' + Long.remainderUnsigned(splitmix(s), 26));
        return v;
    }

    /** Seed 000's record: the article's custom serialisation, field by field with
     *  DataOutputStream (2 longs, 4 doubles, then the string as writeUTF). */
    public static final class Rec {
        public final long id, stamp;
        public final double a, b, c, d;
        public final String text;

        public Rec(long id, long stamp, double a, double b, double c, double d, String text) {
            this.id = id; this.stamp = stamp; this.a = a; this.b = b; this.c = c; this.d = d; this.text = text;
        }

        public byte[] serialize() {
            ByteArrayOutputStream bo = new ByteArrayOutputStream(64 + text.length());
            try (DataOutputStream o = new DataOutputStream(bo)) {
                o.writeLong(id);
                o.writeLong(stamp);
                o.writeDouble(a);
                o.writeDouble(b);
                o.writeDouble(c);
                o.writeDouble(d);
                o.writeUTF(text);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return bo.toByteArray();
        }

        public static Rec deserialize(byte[] v) {
            try (java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(v))) {
                return new Rec(in.readLong(), in.readLong(), in.readDouble(), in.readDouble(), in.readDouble(),
                        in.readDouble(), in.readUTF());
            } catch (IOException e) {
                throw new IllegalArgumentException("not a seed-000 record", e);
            }
        }
    }

    /** Record of key number n: deterministic, string length 50..400. */
    public static Rec record(long n) {
        long[] s = {n * 31 + 7};
        int len = 50 + (int) Long.remainderUnsigned(splitmix(s), 351);
        byte[] t = new byte[len];
        for (int i = 0; i < len; i++) t[i] = (byte) ('A' + Long.remainderUnsigned(splitmix(s), 26));
        return new Rec(n, splitmix(s), (splitmix(s) >>> 11) / 1e6, (splitmix(s) >>> 11) / 1e6,
                (splitmix(s) >>> 11) / 1e6, (splitmix(s) >>> 11) / 1e6, new String(t, StandardCharsets.US_ASCII));
    }
}
