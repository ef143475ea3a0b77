package stagebench.kstreams;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;

/**
 * The Kafka Streams job: {@code Main CONFIG.json} runs the configured stage until its standard
 * input closes (its parent process stops it so, or dies), SIGTERM or a failure.
 *
 * <p>It writes into the run directory the effective configuration (the Kafka Streams
 * properties and the producer's, as the client sees them), the topology, the ready file once
 * Kafka Streams is RUNNING, and a progress event every progress interval: the inputs
 * processed since the last one (and, from parse on, the records parsed and the malformed
 * ones). A failure prints one {@code ERROR:} line and exits 1.
 */
public final class Main {
    private static final Duration CLOSE = Duration.ofSeconds(30);

    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("ERROR: usage: java stagebench.kstreams.Main CONFIG.json");
            System.exit(2);
        }
        Config config = new Config(new ObjectMapper().readTree(new File(args[0])), System.getenv(Config.SECRETS));
        Path runDir = Path.of(config.text("run_dir"));
        Properties props = config.properties();
        Stages stages = new Stages(config);
        Topology topology = stages.build(props);
        writeEffective(runDir.resolve(config.text("effective_file")), config, props, topology);

        KafkaStreams streams = new KafkaStreams(topology, props);
        CountDownLatch done = new CountDownLatch(1);
        String[] failure = {null};
        Path ready = runDir.resolve(config.text("ready_file"));
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING && !Files.exists(ready)) {
                touch(ready);
            }
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            failure[0] = e.toString();
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(CLOSE), "close-on-signal"));
        Thread watch = new Thread(() -> {
            waitForEnd(System.in);
            done.countDown();
        }, "parent-watch");
        watch.setDaemon(true);
        watch.start();

        ScheduledExecutorService progress = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "progress");
            t.setDaemon(true);
            return t;
        });
        Progress writer = new Progress(runDir.resolve(config.text("progress_file")), stages,
                !config.text("stage").equals("ingest"), config.millis("quiet_ms"));
        long every = config.millis("progress_ms");
        progress.scheduleAtFixedRate(writer::write, every, every, TimeUnit.MILLISECONDS);
        streams.start();
        done.await();
        progress.shutdown();
        streams.close(CLOSE);
        if (failure[0] != null || streams.state() == KafkaStreams.State.ERROR) {
            System.err.println("ERROR: the Kafka Streams " + config.text("stage") + " job failed: " + failure[0]);
            System.exit(1);
        }
        System.exit(0);
    }

    private static void waitForEnd(InputStream in) {
        byte[] buffer = new byte[4096];
        try {
            while (in.read(buffer) >= 0) {
                // the parent writes nothing; the read ends when it closes the pipe or dies
            }
        } catch (IOException e) {
            // a broken pipe is a closed one
        }
    }

    private static void touch(Path path) {
        try {
            Files.writeString(path, "");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The Kafka Streams properties and the producer's, as the clients get them, a value that
     * holds a secret written {@code <redacted>}.
     */
    private static void writeEffective(Path path, Config config, Properties props, Topology topology)
            throws IOException {
        StreamsConfig streams = new StreamsConfig(props);
        Map<String, Object> effective = new TreeMap<>();
        Map<String, String> values = new TreeMap<>();
        streams.values().forEach((k, v) -> values.put(k, config.shown(String.valueOf(v))));
        effective.put("streams", values);
        Map<String, String> producer = new TreeMap<>();
        streams.getProducerConfigs("stagebench").forEach((k, v) -> producer.put(k, config.shown(String.valueOf(v))));
        effective.put("producer", producer);
        effective.put("topology", topology.describe().toString());
        Files.write(path, new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(effective));
    }

    /**
     * Progress events as JSON lines: inputs processed per interval, and parse's counts. An
     * event without inputs is written only once none came for {@code quietMs}: a task holds
     * one topic's inputs back while the other's partition is empty (max.task.idle.ms), so the
     * last inputs of a run are processed that long after they were read, and the bench must
     * not take the pause for the job's end.
     */
    private static final class Progress {
        private final Path path;
        private final Stages stages;
        private final boolean parses;
        private final long quietMs;
        private long inputs;
        private long parsed;
        private long malformed;
        private long lastInputMs = System.currentTimeMillis();

        Progress(Path path, Stages stages, boolean parses, long quietMs) {
            this.path = path;
            this.stages = stages;
            this.parses = parses;
            this.quietMs = quietMs;
        }

        void write() {
            long now = System.currentTimeMillis();
            long nowInputs = stages.inputs.get();
            if (nowInputs != inputs) {
                lastInputMs = now;
            } else if (now - lastInputMs <= quietMs) {
                return;
            }
            long nowParsed = stages.parsed.get();
            long nowMalformed = stages.malformed.get();
            StringBuilder line = new StringBuilder("{\"event\": \"progress\", \"time_ms\": ")
                    .append(now)
                    .append(", \"numInputRows\": ").append(nowInputs - inputs);
            if (parses) {
                line.append(", \"observedMetrics\": {\"parse\": {\"records\": ").append(nowParsed - parsed)
                        .append(", \"malformed\": ").append(nowMalformed - malformed).append("}}");
            }
            line.append("}\n");
            inputs = nowInputs;
            parsed = nowParsed;
            malformed = nowMalformed;
            try {
                Files.writeString(path, line, StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                System.err.println("progress: " + e);
            }
        }
    }
}
