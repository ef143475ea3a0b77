package stagebench.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import stagebench.kstreams.Records.Joined;
import stagebench.kstreams.Records.Parsed;
import stagebench.kstreams.Records.Second;
import stagebench.kstreams.Records.Seconds;

/**
 * The stage ladder (docs/method.md#stages) as one Kafka Streams topology: ingest → parse →
 * join → tumbling → sliding, and the variant tumbling-union over parse, up to the configured
 * stage, written to the output topic.
 *
 * <p>Both input topics are one stream, keyed by location id (the publisher's key), so the
 * join and the windows group by the input key without a repartition. The broker time of an
 * input is its record timestamp (the topics stamp LogAppendTime); from parse on, a record is
 * re-stamped to its event time (observation_ts) with processValues, which keeps the key,
 * and carries its broker time in its value. The windows close as Spark's and Flink's do with
 * the same watermark delay: a window is closed once its task's stream time (the newest event
 * time it has seen) is the delay past its end; built-in windows are then emitted once
 * (suppress until the window closes; a sliding window with the second that ends it),
 * tumbling-union at every update.
 */
final class Stages {
    static final long SECOND_MS = 1000;
    static final String SLIDING_STORE = "sliding-seconds";

    final AtomicLong inputs = new AtomicLong();
    final AtomicLong parsed = new AtomicLong();
    final AtomicLong malformed = new AtomicLong();

    private final Config config;
    private final Input input;
    private final Output output;
    private final boolean parseStage;
    private final boolean custom;

    Stages(Config config) {
        this.config = config;
        JsonNode contract = config.json.get("contract");
        this.input = new Input(contract);
        this.output = new Output(config.text("run_id"), Config.strings(contract.get("fields")), config.types());
        this.parseStage = config.text("stage").equals("parse");
        this.custom = config.text("impl").equals("custom");
    }

    Topology build(Properties props) {
        StreamsBuilder builder = new StreamsBuilder();
        if (custom) {
            boolean inMemory = config.text("state_store").equals("in-memory");
            for (String store : customStores()) {
                builder.addStateStore(Custom.store(store, inMemory));
            }
        } else if (config.text("stage").equals("sliding")) {
            builder.addStateStore(Custom.store(SLIDING_STORE, config.text("state_store").equals("in-memory")));
        }
        KStream<byte[], byte[]> raw = builder.stream(
                List.of(config.text("speed_topic"), config.text("flow_topic")),
                Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("inputs"));
        String stage = config.text("stage");
        KStream<byte[], byte[]> out;
        if (stage.equals("ingest")) {
            // no key, as Spark's ingest writes (it has no location id column)
            out = raw.processValues(Ingest::new, Named.as("ingest")).selectKey((k, v) -> null, Named.as("no-key"));
        } else {
            KStream<byte[], Parsed> valid = raw.processValues(Parse::new, Named.as("parse"));
            switch (stage) {
                case "parse":
                    out = valid.mapValues(p -> p.output, Named.as("parse-output"));
                    break;
                case "join":
                    out = join(valid).mapValues(output::join, Named.as("join-output"));
                    break;
                case "tumbling":
                    out = custom ? custom(join(valid)) : windows(tumbling(join(valid)), "tumbling");
                    break;
                case "sliding":
                    out = custom ? custom(join(valid)) : sliding(tumbling(join(valid)));
                    break;
                case "tumbling-union":
                    out = windows(union(valid), "union");
                    break;
                default:
                    throw new IllegalArgumentException("Kafka Streams does not run stage " + stage);
            }
        }
        out.to(config.text("output_topic"), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("output"));
        return builder.build(props);
    }

    /** The windows' outputs, keyed by location (no repartition: they go straight out). */
    private KStream<byte[], byte[]> windows(KTable<Windowed<byte[]>, Second> windows, String name) {
        return windows.toStream(Named.as(name + "-windows"))
                .map((w, s) -> KeyValue.pair(w.key(), output.tumbling(s, w.window().start(), w.window().end())),
                        Named.as(name + "-output"));
    }

    /** The custom windows (impl custom): the pairs' seconds, and the sliding windows of them. */
    private KStream<byte[], byte[]> custom(KStream<byte[], Joined> joined) {
        return joined.process(() -> new Custom(config, output), Named.as("custom-windows"), customStores());
    }

    private String[] customStores() {
        return config.text("stage").equals("sliding")
                ? new String[] {Custom.OPEN, Custom.KEPT}
                : new String[] {Custom.OPEN};
    }

    /** The inner join of speed and flow on location, lane and observation time. */
    private KStream<byte[], Joined> join(KStream<byte[], Parsed> valid) {
        JoinWindows window = JoinWindows.ofTimeDifferenceAndGrace(
                Duration.ofMillis(config.millis("join_range_ms")), Duration.ofMillis(config.millis("join_grace_ms")));
        return valid.filter((k, p) -> p.speed, Named.as("speeds"))
                .join(valid.filter((k, p) -> !p.speed, Named.as("flows")), Joined::of, window,
                        StreamJoined.with(Serdes.ByteArray(), Records.PARSED, Records.PARSED)
                                .withName("join").withStoreName("join"))
                .filter((k, j) -> j != null, Named.as("pairs"));
    }

    /** The 1 s tumbling window per location over the pairs, emitted once when it closes. */
    private KTable<Windowed<byte[]>, Second> tumbling(KStream<byte[], Joined> joined) {
        return joined.groupByKey(Grouped.with("tumbling", Serdes.ByteArray(), null))
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(SECOND_MS), delay()))
                .aggregate(Second::new, (k, j, s) -> s.pair(j), Named.as("tumbling"),
                        Materialized.with(Serdes.ByteArray(), Records.SECOND))
                .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()).withName("tumbling-close"));
    }

    /** The sliding window over the closed seconds, each window emitted when its last second is. */
    private KStream<byte[], byte[]> sliding(KTable<Windowed<byte[]>, Second> seconds) {
        return seconds.toStream(Named.as("tumbling-closed"))
                .process(Sliding::new, Named.as("sliding"), SLIDING_STORE);
    }

    /** The tumbling window aggregated from the inputs of both kinds, written at every update. */
    private KTable<Windowed<byte[]>, Second> union(KStream<byte[], Parsed> valid) {
        return valid.groupByKey(Grouped.with("union", Serdes.ByteArray(), Records.PARSED))
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(SECOND_MS), delay()))
                .aggregate(Second::new, (k, p, s) -> s.input(p), Named.as("union"),
                        Materialized.with(Serdes.ByteArray(), Records.SECOND));
    }

    private Duration delay() {
        return Duration.ofMillis(config.millis("watermark_delay_ms"));
    }

    /** Ingest: every record written back unchanged, with its identity and broker time. */
    private final class Ingest implements FixedKeyProcessor<byte[], byte[], byte[]> {
        private FixedKeyProcessorContext<byte[], byte[]> context;

        @Override
        public void init(FixedKeyProcessorContext<byte[], byte[]> context) {
            this.context = context;
        }

        @Override
        public void process(FixedKeyRecord<byte[], byte[]> record) {
            inputs.incrementAndGet();
            RecordMetadata m = context.recordMetadata().orElseThrow();
            context.forward(record.withValue(
                    output.ingest(m.topic(), m.partition(), m.offset(), record.timestamp(), record.value())));
        }
    }

    /** Parse: a valid input re-stamped to its event time; a malformed one counted, dropped. */
    private final class Parse implements FixedKeyProcessor<byte[], byte[], Parsed> {
        private FixedKeyProcessorContext<byte[], Parsed> context;

        @Override
        public void init(FixedKeyProcessorContext<byte[], Parsed> context) {
            this.context = context;
        }

        @Override
        public void process(FixedKeyRecord<byte[], byte[]> record) {
            inputs.incrementAndGet();
            parsed.incrementAndGet();
            JsonNode m = input.valid(record.value());
            if (m == null) {
                malformed.incrementAndGet();
                return;
            }
            Parsed p = new Parsed();
            p.location = m.get("location_id").textValue();
            p.speed = m.hasNonNull("speed");
            p.lane = m.get("lane").longValue();
            p.observationTs = m.get("observation_ts").longValue();
            p.value = m.get(p.speed ? "speed" : "flow").doubleValue();
            p.seq = m.get("seq").longValue();
            p.numLanes = m.get("num_lanes").longValue();
            p.brokerTs = record.timestamp();
            if (parseStage) {
                RecordMetadata meta = context.recordMetadata().orElseThrow();
                p.output = output.parse(meta.topic(), meta.partition(), meta.offset(),
                        record.timestamp(), p.speed ? "speed" : "flow", m);
            }
            context.forward(record.withValue(p).withTimestamp(p.observationTs));
        }
    }

    /**
     * The sliding windows of each location over its closed seconds. A window ends with the
     * second it is emitted with: that second closes when the stream time passes the window's
     * end plus the watermark delay, which is when a watermark closes Flink's and Spark's. The
     * seconds of a location come in event-time order (suppress emits them as the stream time
     * passes their ends, without grace for later inputs), so every earlier second of the
     * window is already in the store. The store keeps per location the seconds a later window
     * can still hold. Kafka Streams' own hopping window would close only when a later second
     * arrives: its stream time must pass the end, which the window's own seconds never do.
     */
    private final class Sliding implements Processor<Windowed<byte[]>, Second, byte[], byte[]> {
        private final long length = config.millis("window_length_ms");
        private final long slide = config.millis("window_slide_ms");
        private final long shortMs = config.millis("lookback_short_ms");
        private final long longMs = config.millis("lookback_long_ms");
        private ProcessorContext<byte[], byte[]> context;
        private KeyValueStore<byte[], Seconds> kept;

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
            this.kept = context.getStateStore(SLIDING_STORE);
        }

        @Override
        public void process(Record<Windowed<byte[]>, Second> record) {
            byte[] location = record.key().key();
            Second last = record.value();
            last.start = record.key().window().start();
            long end = last.start + SECOND_MS;
            Seconds stored = kept.get(location);
            Seconds window = new Seconds();
            if (stored != null) {
                stored.seconds.stream().filter(s -> s.start >= end - length && s.start < last.start)
                        .forEach(window::add);
            }
            window.add(last);
            if (end % slide == 0) {
                context.forward(new Record<>(location,
                        output.sliding(window, last, end - length, end, shortMs, longMs), last.start));
            }
            Seconds later = new Seconds();
            window.seconds.stream().filter(s -> s.start >= end + SECOND_MS - length).forEach(later::add);
            if (later.seconds.isEmpty()) {
                kept.delete(location);
            } else {
                kept.put(location, later);
            }
        }
    }
}
