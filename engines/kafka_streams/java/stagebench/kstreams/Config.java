package stagebench.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The job's configuration, written by engines/kafka_streams/job.py: the stage and its
 * parameters, the topics, the run directory's files, the input contract's tables and the
 * Kafka Streams properties, each that can carry a secret written {@code <redacted>}; their
 * values come from the environment variable {@link #SECRETS}, never from a file.
 */
final class Config {
    static final String SECRETS = "STAGEBENCH_KAFKA_SECRETS";
    static final String REDACTED = "<redacted>";

    final JsonNode json;
    private final Map<String, String> secrets = new LinkedHashMap<>();

    Config(JsonNode json, String secrets) throws IOException {
        this.json = json;
        if (secrets != null && !secrets.isEmpty()) {
            new ObjectMapper().readTree(secrets).fields()
                    .forEachRemaining(e -> this.secrets.put(e.getKey(), e.getValue().asText()));
        }
    }

    String text(String name) {
        JsonNode node = json.get(name);
        if (node == null || !node.isTextual()) {
            throw new IllegalArgumentException("configuration key " + name + " missing or not a string");
        }
        return node.textValue();
    }

    long millis(String name) {
        JsonNode node = json.get(name);
        if (node == null || !node.canConvertToLong()) {
            throw new IllegalArgumentException("configuration key " + name + " missing or not a number");
        }
        return node.longValue();
    }

    /** The Kafka Streams properties, with the secrets' values. */
    Properties properties() {
        Properties props = new Properties();
        json.get("properties").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
        props.putAll(secrets);
        return props;
    }

    /** {@code value} as it may be written: {@code <redacted>} when it holds a secret. */
    String shown(String value) {
        for (String secret : secrets.values()) {
            if (!secret.isEmpty() && value.contains(secret)) {
                return REDACTED;
            }
        }
        return value;
    }

    Map<String, String> types() {
        Map<String, String> types = new LinkedHashMap<>();
        json.get("contract").get("types").fields().forEachRemaining(e -> types.put(e.getKey(), e.getValue().asText()));
        return types;
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(node -> out.add(node.asText()));
        return out;
    }
}
