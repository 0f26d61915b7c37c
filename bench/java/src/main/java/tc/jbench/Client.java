package tc.jbench;

/** One client library behind the driver: synchronous set and get, as the articles' threads did. */
public interface Client extends AutoCloseable {
    void set(String key, byte[] value) throws Exception;

    /** The value, or null on a miss. */
    byte[] get(String key) throws Exception;

    @Override
    void close();

    /** Library name, version and settings, for the report. */
    String describe();
}
