package dev.modelkeeper.onnx;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.util.List;

/**
 * The optional per-version {@code config.json} of a repository model. Immutable and thread-safe.
 *
 * <p>Format (every key optional, unknown keys and {@code null} values ignored; at most 64 KiB):
 *
 * <pre>{@code
 * {
 *   "description": "Iris species classifier (multinomial logistic regression)",
 *   "labels": ["setosa", "versicolor", "virginica"],
 *   "expected_size_bytes": 1234
 * }
 * }</pre>
 *
 * <p>The file is data-bound to this record by Jackson: a new key is one more component with its
 * {@code @JsonProperty} name (and its default in {@link #EMPTY}). Types are strict: no number is
 * read as a string or the other way round.
 *
 * @param description a human-readable description, empty when none
 * @param labels class labels (index i names class i), empty when none
 * @param expectedSizeBytes the resident size to reserve before loading, or -1 when not given
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ModelConfig(
    @JsonProperty("description") String description,
    @JsonProperty("labels") List<String> labels,
    @JsonProperty("expected_size_bytes") long expectedSizeBytes) {

  /** The file name of a version's config inside its folder. */
  public static final String FILE_NAME = "config.json";

  /** A config with nothing in it: the value of every key a file leaves out. */
  public static final ModelConfig EMPTY = new ModelConfig("", List.of(), -1);

  private static final ObjectMapper JSON = mapper();

  /**
   * Normalizes absent lists and strings to empty ones.
   *
   * @throws IllegalArgumentException when {@code expectedSizeBytes} is below -1
   */
  public ModelConfig {
    description = description == null ? "" : description;
    labels = labels == null ? List.of() : List.copyOf(labels);
    if (expectedSizeBytes < -1) {
      throw new IllegalArgumentException(
          "config key \"expected_size_bytes\" must be a non-negative integer, was "
              + expectedSizeBytes);
    }
  }

  /**
   * Parses the JSON text of a config file; keys it leaves out take their value from {@link #EMPTY}.
   *
   * @throws IllegalArgumentException when the text is not a JSON object or a key has the wrong type
   */
  public static ModelConfig parse(String json) {
    try {
      JsonNode given = JSON.readTree(json);
      if (given == null || !given.isObject()) {
        throw new IllegalArgumentException("config must be a JSON object");
      }
      ObjectNode merged = JSON.valueToTree(EMPTY);
      for (var e : given.properties()) {
        if (!e.getValue().isNull()) {
          merged.set(e.getKey(), e.getValue());
        }
      }
      return JSON.treeToValue(merged, ModelConfig.class);
    } catch (JsonParseException e) {
      throw new IllegalArgumentException("config is not valid JSON: " + e.getOriginalMessage(), e);
    } catch (JsonMappingException e) {
      if (e.getCause() instanceof IllegalArgumentException) {
        throw (IllegalArgumentException) e.getCause();
      }
      throw new IllegalArgumentException(
          "config key \"" + path(e) + "\" has the wrong type: " + e.getOriginalMessage(), e);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot read config: " + e.getOriginalMessage(), e);
    }
  }

  /** This config as JSON text that {@link #parse} reads back. */
  public String toJson() {
    try {
      return JSON.writeValueAsString(this) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write " + this, e);
    }
  }

  private static String path(JsonMappingException e) {
    StringBuilder sb = new StringBuilder();
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getFieldName() != null) {
        sb.append(sb.length() == 0 ? "" : ".").append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        sb.append('[').append(r.getIndex()).append(']');
      }
    }
    return sb.toString();
  }

  private static ObjectMapper mapper() {
    ObjectMapper mapper =
        JsonMapper.builder()
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();
    mapper
        .coercionConfigFor(LogicalType.Textual)
        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
    return mapper;
  }
}
