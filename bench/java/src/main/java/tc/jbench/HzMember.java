package tc.jbench;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;

/** A Hazelcast member for bench/compare --with hazelcast: one member on 127.0.0.1:PORT (no
 *  multicast, no port auto-increment), its native client protocol and its memcached text
 *  protocol (network memcache-protocol enabled) on that same port. Runs until killed. */
public final class HzMember {
    public static final String CLUSTER = "twinbench";
    public static final String MAP = "twinbench";

    public static void main(String[] args) {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 5701;
        System.setProperty("hazelcast.logging.type", System.getProperty("hazelcast.logging.type", "none"));
        System.setProperty("hazelcast.phone.home.enabled", "false");
        Config c = new Config();
        c.setClusterName(CLUSTER);
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.getJetConfig().setEnabled(false);
        c.getNetworkConfig().setPort(port).setPortAutoIncrement(false);
        c.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        c.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
        c.getNetworkConfig().getJoin().getTcpIpConfig().setEnabled(false);
        c.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
        c.getNetworkConfig().getMemcacheProtocolConfig().setEnabled(true);
        HazelcastInstance hz = Hazelcast.newHazelcastInstance(c);
        System.out.println("hazelcast member " + hz.getCluster().getLocalMember().getAddress() + " ready");
        System.out.flush();
    }
}
