package stagebench.kstreams;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The values that flow between the stages, and the serdes of those kept in a state store:
 * a parsed input (the join's two sides), a joined pair, a location-second's aggregate (the
 * tumbling windows), the seconds of a sliding window. A value passed from one processor to
 * the next in one task is never serialized; one in a store or a repartition topic is, with
 * these serdes.
 */
final class Records {
    private Records() {}

    /** An input message of the parse stage on: the fields later stages use. */
    static final class Parsed {
        String location;
        boolean speed;
        long lane;
        long observationTs;
        double value;
        long seq;
        long numLanes;
        long brokerTs;
        /** The parse stage's output of it (never serialized: only that stage sets it). */
        byte[] output;
    }

    /** A speed and its flow twin: the join's output. */
    static final class Joined {
        String location;
        long lane;
        long observationTs;
        double speed;
        double flow;
        long seq;
        long numLanes;
        long latest;
        long earliest;

        static Joined of(Parsed s, Parsed f) {
            if (s.lane != f.lane || s.observationTs != f.observationTs || !s.location.equals(f.location)) {
                return null;
            }
            Joined j = new Joined();
            j.location = s.location;
            j.lane = s.lane;
            j.observationTs = s.observationTs;
            j.speed = s.value;
            j.flow = f.value;
            j.seq = s.seq;
            j.numLanes = s.numLanes;
            j.latest = Math.max(s.brokerTs, f.brokerTs);
            j.earliest = Math.min(s.brokerTs, f.brokerTs);
            return j;
        }
    }

    /** A location-second: flows and speeds summed and counted, lanes seen, input times. */
    static final class Second {
        String location;
        long start;
        double flowSum;
        long flows;
        double speedSum;
        long speeds;
        long lanesLow;
        long lanesHigh;
        long numLanes;
        long latest = Long.MIN_VALUE;
        long earliest = Long.MAX_VALUE;
        long count;
        /** Custom windows: a second emitted (tumbling) or a window ending with it (sliding). */
        boolean done;

        Second pair(Joined j) {
            add(j.location, j.lane, j.numLanes, j.latest, j.earliest, 2);
            flowSum += j.flow;
            flows++;
            speedSum += j.speed;
            speeds++;
            return this;
        }

        Second input(Parsed p) {
            add(p.location, p.lane, p.numLanes, p.brokerTs, p.brokerTs, 1);
            if (p.speed) {
                speedSum += p.value;
                speeds++;
            } else {
                flowSum += p.value;
                flows++;
            }
            return this;
        }

        private void add(String loc, long lane, long lanes, long late, long early, long inputs) {
            location = loc;
            if (lane < 64) {
                lanesLow |= 1L << lane;
            } else {
                lanesHigh |= 1L << (lane - 64);
            }
            numLanes = Math.max(numLanes, lanes);
            latest = Math.max(latest, late);
            earliest = Math.min(earliest, early);
            count += inputs;
        }

        long lanesSeen() {
            return Long.bitCount(lanesLow) + Long.bitCount(lanesHigh);
        }

        Double flowSumOrNull() {
            return flows > 0 ? flowSum : null;
        }

        Double speedAvgOrNull() {
            return speeds > 0 ? speedSum / speeds : null;
        }
    }

    /** The seconds of one sliding window, each a closed tumbling second. */
    static final class Seconds {
        final List<Second> seconds = new ArrayList<>();

        Seconds add(Second s) {
            seconds.add(s);
            return this;
        }

        Second at(long start) {
            for (Second s : seconds) {
                if (s.start == start) {
                    return s;
                }
            }
            return null;
        }
    }

    static final Serde<Parsed> PARSED = serde(64, (p, b) -> {
        putString(b, p.location);
        b.put((byte) (p.speed ? 1 : 0)).putLong(p.lane).putLong(p.observationTs).putDouble(p.value)
                .putLong(p.seq).putLong(p.numLanes).putLong(p.brokerTs);
    }, b -> {
        Parsed p = new Parsed();
        p.location = getString(b);
        p.speed = b.get() == 1;
        p.lane = b.getLong();
        p.observationTs = b.getLong();
        p.value = b.getDouble();
        p.seq = b.getLong();
        p.numLanes = b.getLong();
        p.brokerTs = b.getLong();
        return p;
    }, p -> p.location);

    static final Serde<Second> SECOND = serde(96, Records::putSecond, Records::getSecond, s -> s.location);

    static final Serde<Seconds> SECONDS = Serdes.serdeFrom(
            (topic, w) -> {
                if (w == null) {
                    return null;
                }
                ByteBuffer b = ByteBuffer.allocate(4 + w.seconds.stream()
                        .mapToInt(s -> 100 + utf8(s.location).length).sum());
                b.putInt(w.seconds.size());
                w.seconds.forEach(s -> putSecond(s, b));
                return b.array();
            },
            (topic, bytes) -> {
                if (bytes == null) {
                    return null;
                }
                ByteBuffer b = ByteBuffer.wrap(bytes);
                Seconds w = new Seconds();
                for (int i = b.getInt(); i > 0; i--) {
                    w.seconds.add(getSecond(b));
                }
                return w;
            });

    private static void putSecond(Second s, ByteBuffer b) {
        putString(b, s.location);
        b.putLong(s.start).putDouble(s.flowSum).putLong(s.flows).putDouble(s.speedSum).putLong(s.speeds)
                .putLong(s.lanesLow).putLong(s.lanesHigh).putLong(s.numLanes).putLong(s.latest)
                .putLong(s.earliest).putLong(s.count).put((byte) (s.done ? 1 : 0));
    }

    private static Second getSecond(ByteBuffer b) {
        Second s = new Second();
        s.location = getString(b);
        s.start = b.getLong();
        s.flowSum = b.getDouble();
        s.flows = b.getLong();
        s.speedSum = b.getDouble();
        s.speeds = b.getLong();
        s.lanesLow = b.getLong();
        s.lanesHigh = b.getLong();
        s.numLanes = b.getLong();
        s.latest = b.getLong();
        s.earliest = b.getLong();
        s.count = b.getLong();
        s.done = b.get() == 1;
        return s;
    }

    private interface Writer<T> {
        void write(T value, ByteBuffer out);
    }

    /** A serde writing a value of at most ``fixed`` bytes besides its one string. */
    private static <T> Serde<T> serde(
            int fixed, Writer<T> writer, Function<ByteBuffer, T> reader, Function<T, String> text) {
        return Serdes.serdeFrom(
                (topic, value) -> {
                    if (value == null) {
                        return null;
                    }
                    ByteBuffer b = ByteBuffer.allocate(fixed + 4 + utf8(text.apply(value)).length);
                    writer.write(value, b);
                    return b.array();
                },
                (topic, bytes) -> bytes == null ? null : reader.apply(ByteBuffer.wrap(bytes)));
    }

    private static byte[] utf8(String s) {
        return s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    }

    private static void putString(ByteBuffer b, String s) {
        byte[] bytes = utf8(s);
        b.putInt(bytes.length).put(bytes);
    }

    private static String getString(ByteBuffer b) {
        byte[] bytes = new byte[b.getInt()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
