package stagebench.kstreams;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import stagebench.kstreams.Records.Joined;
import stagebench.kstreams.Records.Second;
import stagebench.kstreams.Records.Seconds;

/**
 * The output values, as JSON in the fields and order Spark's stages write them
 * (engines/spark/transforms.py through engines/spark/sink.py): the run id first, then the
 * stage's fields, null fields written as null, then the carried input times and count.
 */
final class Output {
    private static final JsonFactory FACTORY = new JsonFactory();

    private final String runId;
    private final List<String> inputFields;
    private final Map<String, String> types;
    private final String sourceHead;

    Output(String runId, List<String> inputFields, Map<String, String> types) {
        this.runId = runId;
        this.inputFields = inputFields;
        this.types = types;
        this.sourceHead = "{\"run_id\":" + quoted(runId) + ",\"source_topic\":";
    }

    /** Ingest: the record's identity and broker time, its value spliced in unchanged. */
    byte[] ingest(String topic, int partition, long offset, long ts, byte[] value) {
        if (value == null) {
            return null;
        }
        byte[] head = (sourceHead + quoted(topic) + ",\"source_partition\":" + partition
                + ",\"source_offset\":" + offset + ",\"input_ts_latest\":" + ts
                + ",\"input_ts_earliest\":" + ts + ",\"input_count\":1,\"record\":")
                .getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[head.length + value.length + 1];
        System.arraycopy(head, 0, out, 0, head.length);
        System.arraycopy(value, 0, out, head.length, value.length);
        out[out.length - 1] = '}';
        return out;
    }

    /** Parse: the record's identity, its kind and every input field (typed), its time. */
    byte[] parse(String topic, int partition, long offset, long ts, String kind, JsonNode m) {
        return write(g -> {
            g.writeStringField("source_topic", topic);
            g.writeNumberField("source_partition", partition);
            g.writeNumberField("source_offset", offset);
            g.writeStringField("kind", kind);
            for (String name : inputFields) {
                JsonNode field = m.get(name);
                g.writeFieldName(name);
                String type = types.get(name);
                if (field == null || field.isNull()) {
                    g.writeNull();
                } else if ("string".equals(type)) {
                    g.writeString(field.textValue());
                } else if ("float64".equals(type)) {
                    g.writeNumber(field.doubleValue());
                } else {
                    g.writeNumber(field.longValue());
                }
            }
            times(g, ts, ts, 1);
        });
    }

    byte[] join(Joined j) {
        return write(g -> {
            g.writeStringField("location_id", j.location);
            g.writeNumberField("lane", j.lane);
            g.writeNumberField("observation_ts", j.observationTs);
            g.writeNumberField("speed", j.speed);
            g.writeNumberField("flow", j.flow);
            g.writeNumberField("seq", j.seq);
            g.writeNumberField("num_lanes", j.numLanes);
            times(g, j.latest, j.earliest, 2);
        });
    }

    /** A tumbling window (also tumbling-union's, whose flow sum or mean speed may be null). */
    byte[] tumbling(Second s, long start, long end) {
        return write(g -> {
            g.writeStringField("location_id", s.location);
            g.writeNumberField("window_start", start);
            g.writeNumberField("window_end", end);
            number(g, "flow_sum", s.flowSumOrNull());
            number(g, "speed_avg", s.speedAvgOrNull());
            g.writeNumberField("lanes_seen", s.lanesSeen());
            g.writeNumberField("num_lanes", s.numLanes);
            times(g, s.latest, s.earliest, s.count);
        });
    }

    /** A sliding window: its last second's values, their changes against the lookbacks. */
    byte[] sliding(Seconds w, Second now, long start, long end, long shortMs, long longMs) {
        Second before = w.at(now.start - shortMs);
        Second longBefore = w.at(now.start - longMs);
        long latest = Long.MIN_VALUE;
        long earliest = Long.MAX_VALUE;
        long count = 0;
        for (Second s : w.seconds) {
            latest = Math.max(latest, s.latest);
            earliest = Math.min(earliest, s.earliest);
            count += s.count;
        }
        long late = latest;
        long early = earliest;
        long inputs = count;
        return write(g -> {
            g.writeStringField("location_id", now.location);
            g.writeNumberField("window_start", start);
            g.writeNumberField("window_end", end);
            number(g, "flow_sum", now.flowSumOrNull());
            number(g, "speed_avg", now.speedAvgOrNull());
            number(g, "flow_change_short", change(now.flowSumOrNull(), before, true));
            number(g, "flow_change_long", change(now.flowSumOrNull(), longBefore, true));
            number(g, "speed_change_short", change(now.speedAvgOrNull(), before, false));
            number(g, "speed_change_long", change(now.speedAvgOrNull(), longBefore, false));
            times(g, late, early, inputs);
        });
    }

    /** (now − then) / then; null when the earlier second is missing or zero. */
    private static Double change(Double now, Second then, boolean flow) {
        Double was = then == null ? null : flow ? then.flowSumOrNull() : then.speedAvgOrNull();
        if (now == null || was == null || was == 0.0) {
            return null;
        }
        return (now - was) / was;
    }

    private interface Fields {
        void write(JsonGenerator g) throws IOException;
    }

    private byte[] write(Fields fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("run_id", runId);
            fields.write(g);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void times(JsonGenerator g, long latest, long earliest, long count) throws IOException {
        g.writeNumberField("input_ts_latest", latest);
        g.writeNumberField("input_ts_earliest", earliest);
        g.writeNumberField("input_count", count);
    }

    private static void number(JsonGenerator g, String name, Double value) throws IOException {
        g.writeFieldName(name);
        if (value == null) {
            g.writeNull();
        } else {
            g.writeNumber(value);
        }
    }

    private static String quoted(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
