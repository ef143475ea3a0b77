package stagebench.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The job's configuration, written by engines/kafka_streams/job.py: the stage and its
 * parameters, the topics, the run directory's files, the input contract's tables and the
 * Kafka Streams properties.
 */
final class Config {
    final JsonNode json;

    Config(JsonNode json) {
        this.json = json;
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

    Properties properties() {
        Properties props = new Properties();
        json.get("properties").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
        return props;
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
