package dev.modelkeeper.onnx;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Reads and writes {@link ModelConfig} JSON. Stateless and thread-safe. */
final class ModelConfigJson {

  private ModelConfigJson() {}

  static ModelConfig parse(String json) {
    Object root = MiniJson.parse(json);
    if (!(root instanceof Map)) {
      throw new IllegalArgumentException("config must be a JSON object");
    }
    Map<?, ?> map = (Map<?, ?>) root;
    String description = "";
    Object d = map.get("description");
    if (d != null) {
      if (!(d instanceof String)) {
        throw new IllegalArgumentException("config key \"description\" must be a string");
      }
      description = (String) d;
    }
    List<String> labels = new ArrayList<>();
    Object l = map.get("labels");
    if (l != null) {
      if (!(l instanceof List)) {
        throw new IllegalArgumentException("config key \"labels\" must be an array of strings");
      }
      for (Object o : (List<?>) l) {
        if (!(o instanceof String)) {
          throw new IllegalArgumentException("config key \"labels\" must be an array of strings");
        }
        labels.add((String) o);
      }
    }
    long expected = -1;
    Object e = map.get("expected_size_bytes");
    if (e != null) {
      if (!(e instanceof Long) || (Long) e < 0) {
        throw new IllegalArgumentException(
            "config key \"expected_size_bytes\" must be a non-negative integer");
      }
      expected = (Long) e;
    }
    return new ModelConfig(description, labels, expected);
  }

  static String write(ModelConfig config) {
    StringBuilder sb = new StringBuilder("{\n");
    sb.append("  \"description\": ").append(MiniJson.quote(config.description()));
    sb.append(",\n  \"labels\": [");
    for (int i = 0; i < config.labels().size(); i++) {
      sb.append(i == 0 ? "" : ", ").append(MiniJson.quote(config.labels().get(i)));
    }
    sb.append(']');
    if (config.expectedSizeBytes() >= 0) {
      sb.append(",\n  \"expected_size_bytes\": ").append(config.expectedSizeBytes());
    }
    return sb.append("\n}\n").toString();
  }
}
