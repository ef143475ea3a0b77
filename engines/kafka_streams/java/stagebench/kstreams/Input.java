package stagebench.kstreams;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * What a valid input message is, as ground/malformed.py defines it, from the tables the
 * job's configuration carries (field types, required fields, ranges, size limit): a UTF-8
 * JSON object of at most the size limit with every required field and exactly one of
 * speed and flow (a null one is absent), no other field, each of its JSON type (a float
 * field may be a JSON integer), none null or empty, every number inside its range.
 */
final class Input {
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final Map<String, String> types = new HashMap<>();
    private final List<String> required;
    private final List<String> kinds;
    private final Map<String, BigDecimal[]> ranges = new HashMap<>();
    private final int maxBytes;

    Input(JsonNode contract) {
        contract.get("types").fields().forEachRemaining(e -> types.put(e.getKey(), e.getValue().asText()));
        required = Config.strings(contract.get("required"));
        kinds = Config.strings(contract.get("kinds"));
        contract.get("ranges").fields().forEachRemaining(e -> ranges.put(e.getKey(),
                new BigDecimal[] {e.getValue().get(0).decimalValue(), e.getValue().get(1).decimalValue()}));
        maxBytes = contract.get("max_bytes").asInt();
    }

    /** The input as a JSON object when it is a valid input message; null otherwise. */
    JsonNode valid(byte[] value) {
        if (value == null || value.length == 0 || value.length > maxBytes || !utf8(value)) {
            return null;
        }
        JsonNode message;
        try {
            message = JSON.readTree(value);
        } catch (java.io.IOException e) {
            return null;
        }
        if (message == null || !message.isObject()) {
            return null;
        }
        for (String name : required) {
            if (!validField(name, message.get(name))) {
                return null;
            }
        }
        int measured = 0;
        for (String kind : kinds) {
            JsonNode field = message.get(kind);
            if (field != null && !field.isNull()) {
                measured++;
                if (!validField(kind, field)) {
                    return null;
                }
            }
        }
        if (measured != 1) {
            return null;
        }
        for (Iterator<String> names = message.fieldNames(); names.hasNext(); ) {
            if (!types.containsKey(names.next())) {
                return null;
            }
        }
        return message;
    }

    private boolean validField(String name, JsonNode field) {
        if (field == null || field.isNull()) {
            return false;
        }
        switch (types.get(name)) {
            case "string":
                return field.isTextual() && !field.textValue().isEmpty();
            case "int32":
            case "int64":
                if (!field.isIntegralNumber()) {
                    return false;
                }
                break;
            case "float64":
                if (!field.isNumber()) {
                    return false;
                }
                break;
            default:
                return false;
        }
        BigDecimal[] range = ranges.get(name);
        if (range == null) {
            return true;
        }
        BigDecimal number = field.decimalValue();
        return number.compareTo(range[0]) >= 0 && number.compareTo(range[1]) <= 0;
    }

    private static boolean utf8(byte[] value) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(value));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
