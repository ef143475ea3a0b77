package stagebench.kstreams;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import stagebench.kstreams.Records.Joined;
import stagebench.kstreams.Records.Second;
import stagebench.kstreams.Records.Seconds;

/**
 * The custom tumbling and sliding windows (impl custom), as engines/spark/custom.py computes
 * them, in one processor over the join's pairs with two key-value stores per location.
 *
 * <p>A location-second is emitted as soon as all its lanes (num_lanes) are in, a partial one
 * when the watermark (the newest event time this task has seen, less the watermark delay)
 * passes its end, as the built-in window closes it. The sliding stage takes the seconds so
 * emitted and emits a window ending with a second as soon as each earlier second of it is in
 * or can no longer come (the watermark passed its end); a second is forgotten once the
 * watermark is a window length past it. The watermark moves only with input, so every check
 * runs on an input that moves it.
 */
final class Custom implements Processor<byte[], Joined, byte[], byte[]> {
    static final String OPEN = "custom-seconds";
    static final String KEPT = "custom-sliding";
    private static final long SECOND_MS = Stages.SECOND_MS;

    private final Output output;
    private final boolean sliding;
    private final long delay;
    private final long length;
    private final long slide;
    private final long shortMs;
    private final long longMs;
    private ProcessorContext<byte[], byte[]> context;
    private KeyValueStore<byte[], Seconds> open;
    private KeyValueStore<byte[], Seconds> kept;
    private long eventTime = Long.MIN_VALUE;

    Custom(Config config, Output output) {
        this.output = output;
        this.sliding = config.text("stage").equals("sliding");
        this.delay = config.millis("watermark_delay_ms");
        this.length = config.millis("window_length_ms");
        this.slide = config.millis("window_slide_ms");
        this.shortMs = config.millis("lookback_short_ms");
        this.longMs = config.millis("lookback_long_ms");
    }

    /** A store of the windows' state: in memory, or RocksDB's (both logged to a changelog). */
    static StoreBuilder<KeyValueStore<byte[], Seconds>> store(String name, boolean inMemory) {
        return Stores.keyValueStoreBuilder(
                inMemory ? Stores.inMemoryKeyValueStore(name) : Stores.persistentKeyValueStore(name),
                Serdes.ByteArray(), Records.SECONDS);
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        this.context = context;
        this.open = context.getStateStore(OPEN);
        this.kept = sliding ? context.getStateStore(KEPT) : null;
    }

    private long watermark() {
        return eventTime == Long.MIN_VALUE ? Long.MIN_VALUE : eventTime - delay;
    }

    @Override
    public void process(Record<byte[], Joined> record) {
        long before = watermark();
        eventTime = Math.max(eventTime, record.timestamp());
        Joined j = record.value();
        long start = Math.floorDiv(j.observationTs, SECOND_MS) * SECOND_MS;
        if (start + SECOND_MS > watermark()) { // else late: its window is closed
            Seconds partials = open.get(record.key());
            partials = partials == null ? new Seconds() : partials;
            Second s = partials.at(start);
            if (s == null) {
                s = new Second();
                s.start = start;
                partials.add(s);
            }
            if (!s.done) { // a repeated lane of a complete second changes nothing
                s.pair(j);
                if (s.lanesSeen() >= s.numLanes) {
                    s.done = true;
                    emitSecond(record.key(), s);
                }
                open.put(record.key(), partials);
            }
        }
        if (watermark() > before) {
            closeSeconds();
        }
    }

    /** Emit the partial seconds the watermark has passed, forget them; settle every window. */
    private void closeSeconds() {
        long wm = watermark();
        for (KeyValue<byte[], Seconds> entry : all(open)) {
            Seconds left = new Seconds();
            for (Second s : entry.value.seconds) {
                if (s.start + SECOND_MS > wm) {
                    left.add(s);
                } else if (!s.done) {
                    emitSecond(entry.key, s);
                }
            }
            if (left.seconds.size() != entry.value.seconds.size()) {
                if (left.seconds.isEmpty()) {
                    open.delete(entry.key);
                } else {
                    open.put(entry.key, left);
                }
            }
        }
        if (sliding) {
            for (KeyValue<byte[], Seconds> entry : all(kept)) {
                settle(entry.key, entry.value, false);
            }
        }
    }

    private void emitSecond(byte[] location, Second s) {
        if (!sliding) {
            context.forward(new Record<>(location, output.tumbling(s, s.start, s.start + SECOND_MS), s.start));
            return;
        }
        Second copy = Records.SECOND.deserializer().deserialize(null, Records.SECOND.serializer().serialize(null, s));
        copy.done = (copy.start + SECOND_MS) % slide != 0; // done: no window ends with it
        Seconds w = kept.get(location);
        w = w == null ? new Seconds() : w;
        w.add(copy);
        settle(location, w, true);
    }

    /** Emit the sliding windows of one location that nothing can change any more. */
    private void settle(byte[] location, Seconds w, boolean arrived) {
        long wm = watermark();
        w.seconds.sort(Comparator.comparingLong(s -> s.start));
        boolean changed = arrived;
        for (Second last : w.seconds) {
            if (last.done || held(w, last.start, wm)) {
                continue;
            }
            long end = last.start + SECOND_MS;
            Seconds inside = new Seconds();
            w.seconds.stream().filter(s -> s.start >= end - length && s.start < end).forEach(inside::add);
            context.forward(new Record<>(location,
                    output.sliding(inside, last, end - length, end, shortMs, longMs), last.start));
            last.done = true;
            changed = true;
        }
        changed |= w.seconds.removeIf(s -> s.start + length <= wm);
        if (w.seconds.isEmpty()) {
            kept.delete(location);
        } else if (changed) {
            kept.put(location, w);
        }
    }

    /** A window ending with ``last`` waits for an earlier second that can still come. */
    private boolean held(Seconds w, long last, long wm) {
        for (long t = last + SECOND_MS - length; t < last; t += SECOND_MS) {
            if (w.at(t) == null && t + SECOND_MS > wm) {
                return true;
            }
        }
        return false;
    }

    private static List<KeyValue<byte[], Seconds>> all(KeyValueStore<byte[], Seconds> store) {
        List<KeyValue<byte[], Seconds>> entries = new ArrayList<>();
        try (KeyValueIterator<byte[], Seconds> it = store.all()) {
            it.forEachRemaining(entries::add);
        }
        return entries;
    }
}
