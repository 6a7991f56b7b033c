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
    List<Integer> preferred = new ArrayList<>();
    Object p = map.get("preferred_batch_sizes");
    if (p != null) {
      if (!(p instanceof List)) {
        throw new IllegalArgumentException(
            "config key \"preferred_batch_sizes\" must be an array of integers");
      }
      for (Object o : (List<?>) p) {
        preferred.add((int) integer("preferred_batch_sizes", o, Integer.MAX_VALUE));
      }
    }
    ModelConfig.Execution execution =
        new ModelConfig.Execution(
            (int) integer("max_batch_size", map.get("max_batch_size"), Integer.MAX_VALUE),
            integer("max_queue_delay", map.get("max_queue_delay"), Long.MAX_VALUE),
            preferred,
            (int) integer("max_concurrency", map.get("max_concurrency"), Integer.MAX_VALUE),
            (int) integer("intra_op_threads", map.get("intra_op_threads"), Integer.MAX_VALUE),
            (int) integer("inter_op_threads", map.get("inter_op_threads"), Integer.MAX_VALUE));
    return new ModelConfig(description, labels, expected, execution);
  }

  /** An optional integer key's value, -1 when absent. */
  private static long integer(String key, Object value, long max) {
    if (value == null) {
      return -1;
    }
    if (!(value instanceof Long) || (Long) value < 0 || (Long) value > max) {
      throw new IllegalArgumentException(
          "config key \"" + key + "\" must be a non-negative integer up to " + max);
    }
    return (Long) value;
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
    ModelConfig.Execution x = config.execution();
    field(sb, "max_batch_size", x.maxBatchSize());
    field(sb, "max_queue_delay", x.maxQueueDelayMicros());
    if (!x.preferredBatchSizes().isEmpty()) {
      sb.append(",\n  \"preferred_batch_sizes\": ").append(x.preferredBatchSizes());
    }
    field(sb, "max_concurrency", x.maxConcurrency());
    field(sb, "intra_op_threads", x.intraOpThreads());
    field(sb, "inter_op_threads", x.interOpThreads());
    return sb.append("\n}\n").toString();
  }

  private static void field(StringBuilder sb, String key, long value) {
    if (value >= 0) {
      sb.append(",\n  \"").append(key).append("\": ").append(value);
    }
  }
}
