package dev.modelkeeper.onnx;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonIgnoreType;
import com.fasterxml.jackson.annotation.JsonInclude;
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
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The optional per-version {@code config.json} of a repository model. Immutable and thread-safe.
 *
 * <p>Format (every key optional, unknown keys and {@code null} values ignored; at most 64 KiB):
 *
 * <pre>{@code
 * {
 *   "description": "Iris species classifier (multinomial logistic regression)",
 *   "labels": ["setosa", "versicolor", "virginica"],
 *   "expected_size_bytes": 1234,
 *   "max_batch_size": 32,
 *   "max_queue_delay": 500,
 *   "preferred_batch_sizes": [8, 16],
 *   "max_concurrency": 2,
 *   "intra_op_threads": 1,
 *   "inter_op_threads": 1
 * }
 * }</pre>
 *
 * <p>The last six keys are the model's {@link Execution} settings (see {@link #execution()}); each
 * one left out (-1) takes the server-wide default, and is left out when written.
 *
 * <p>The file is data-bound to this record by Jackson: a new key is one more component with its
 * {@code @JsonProperty} name (and its default in {@link #EMPTY}). Types are strict: no number is
 * read as a string or the other way round.
 *
 * @param description a human-readable description, empty when none
 * @param labels class labels (index i names class i), empty when none
 * @param expectedSizeBytes the resident size to reserve before loading, or -1 when not given
 * @param maxBatchSize see {@link Execution#maxBatchSize()}
 * @param maxQueueDelayMicros see {@link Execution#maxQueueDelayMicros()}
 * @param preferredBatchSizes see {@link Execution#preferredBatchSizes()}
 * @param maxConcurrency see {@link Execution#maxConcurrency()}
 * @param intraOpThreads see {@link Execution#intraOpThreads()}
 * @param interOpThreads see {@link Execution#interOpThreads()}
 * @param declared what a configuration file declares beyond these keys: its tensors, version policy
 *     and model file name ({@link Declared#NONE} for a {@code config.json}); not a key of {@code
 *     config.json}
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ModelConfig(
    @JsonProperty("description") String description,
    @JsonProperty("labels") List<String> labels,
    @JsonProperty("expected_size_bytes") long expectedSizeBytes,
    @JsonProperty("max_batch_size")
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = Unset.class)
        int maxBatchSize,
    @JsonProperty("max_queue_delay")
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = Unset.class)
        long maxQueueDelayMicros,
    @JsonProperty("preferred_batch_sizes") @JsonInclude(JsonInclude.Include.NON_EMPTY)
        List<Integer> preferredBatchSizes,
    @JsonProperty("max_concurrency")
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = Unset.class)
        int maxConcurrency,
    @JsonProperty("intra_op_threads")
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = Unset.class)
        int intraOpThreads,
    @JsonProperty("inter_op_threads")
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = Unset.class)
        int interOpThreads,
    @JsonIgnore Declared declared) {

  /** The file name of a version's config inside its folder. */
  public static final String FILE_NAME = "config.json";

  /** A config with nothing in it: the value of every key a file leaves out. */
  public static final ModelConfig EMPTY = new ModelConfig("", List.of(), -1);

  /** For writing: a setting of -1 is left to the server and not written. */
  private static final class Unset {
    @Override
    public boolean equals(Object value) {
      return value instanceof Number && ((Number) value).longValue() == -1;
    }

    @Override
    public int hashCode() {
      return 0;
    }
  }

  private static final ObjectMapper JSON = mapper();
  private static final List<String> UNSET_WHEN_ABSENT =
      List.of(
          "max_batch_size",
          "max_queue_delay",
          "max_concurrency",
          "intra_op_threads",
          "inter_op_threads");

  /**
   * Normalizes absent lists and strings to empty ones.
   *
   * @throws IllegalArgumentException when {@code expectedSizeBytes} is below -1
   */
  public ModelConfig {
    description = description == null ? "" : description;
    labels = labels == null ? List.of() : List.copyOf(labels);
    preferredBatchSizes =
        preferredBatchSizes == null ? List.of() : List.copyOf(preferredBatchSizes);
    declared = declared == null ? Declared.NONE : declared;
    if (expectedSizeBytes < -1) {
      throw new IllegalArgumentException(
          "config key \"expected_size_bytes\" must be a non-negative integer, was "
              + expectedSizeBytes);
    }
    new Execution( // checks the execution settings
        maxBatchSize,
        maxQueueDelayMicros,
        preferredBatchSizes,
        maxConcurrency,
        intraOpThreads,
        interOpThreads);
  }

  /** A config that declares nothing beyond the keys of {@code config.json}. */
  @JsonCreator
  public ModelConfig(
      @JsonProperty("description") String description,
      @JsonProperty("labels") List<String> labels,
      @JsonProperty("expected_size_bytes") long expectedSizeBytes,
      @JsonProperty("max_batch_size") int maxBatchSize,
      @JsonProperty("max_queue_delay") long maxQueueDelayMicros,
      @JsonProperty("preferred_batch_sizes") List<Integer> preferredBatchSizes,
      @JsonProperty("max_concurrency") int maxConcurrency,
      @JsonProperty("intra_op_threads") int intraOpThreads,
      @JsonProperty("inter_op_threads") int interOpThreads) {
    this(
        description,
        labels,
        expectedSizeBytes,
        maxBatchSize,
        maxQueueDelayMicros,
        preferredBatchSizes,
        maxConcurrency,
        intraOpThreads,
        interOpThreads,
        Declared.NONE);
  }

  /** A config with the server's default execution settings. */
  public ModelConfig(String description, List<String> labels, long expectedSizeBytes) {
    this(description, labels, expectedSizeBytes, Execution.DEFAULTS);
  }

  /** A config with {@code execution}'s settings. */
  public ModelConfig(
      String description, List<String> labels, long expectedSizeBytes, Execution execution) {
    this(
        description,
        labels,
        expectedSizeBytes,
        execution.maxBatchSize(),
        execution.maxQueueDelayMicros(),
        execution.preferredBatchSizes(),
        execution.maxConcurrency(),
        execution.intraOpThreads(),
        execution.interOpThreads());
  }

  /** How the server batches and runs the model; {@link Execution#DEFAULTS} when none is set. */
  public Execution execution() {
    return new Execution(
        maxBatchSize,
        maxQueueDelayMicros,
        preferredBatchSizes,
        maxConcurrency,
        intraOpThreads,
        interOpThreads);
  }

  /**
   * How the server runs one model; every value of -1 (or an empty list) means "the server-wide
   * default". Immutable and thread-safe.
   *
   * @param maxBatchSize the most rows one request or batched run may have ({@code max_batch_size});
   *     1 turns batching off for the model; 0 states, as in Triton, that the model has no batch
   *     dimension: its shapes are whole and its requests run one by one
   * @param maxQueueDelayMicros how long the first request of a batch may wait for more rows, in
   *     microseconds ({@code max_queue_delay}); 0 runs whatever has queued up at once
   * @param preferredBatchSizes batch sizes that are run at once when reached, before the delay ends
   *     ({@code preferred_batch_sizes})
   * @param maxConcurrency the most runs of the model at once ({@code max_concurrency})
   * @param intraOpThreads ONNX Runtime threads inside one operator ({@code intra_op_threads})
   * @param interOpThreads ONNX Runtime threads across independent operators ({@code
   *     inter_op_threads})
   */
  public record Execution(
      int maxBatchSize,
      long maxQueueDelayMicros,
      List<Integer> preferredBatchSizes,
      int maxConcurrency,
      int intraOpThreads,
      int interOpThreads) {

    /** Every setting left to the server. */
    public static final Execution DEFAULTS = new Execution(-1, -1, List.of(), -1, -1, -1);

    /**
     * @throws IllegalArgumentException when a value is below its minimum (1 for counts, 0 for the
     *     delay) and not -1, or a preferred size is not positive
     */
    public Execution {
      atLeast("max_batch_size", maxBatchSize, 0);
      atLeast("max_queue_delay", maxQueueDelayMicros, 0);
      atLeast("max_concurrency", maxConcurrency, 1);
      atLeast("intra_op_threads", intraOpThreads, 1);
      atLeast("inter_op_threads", interOpThreads, 1);
      preferredBatchSizes =
          preferredBatchSizes == null ? List.of() : List.copyOf(preferredBatchSizes);
      for (int size : preferredBatchSizes) {
        if (size < 1) {
          throw new IllegalArgumentException(
              "config key \"preferred_batch_sizes\" must hold positive integers, has " + size);
        }
      }
    }

    private static void atLeast(String key, long value, long min) {
      if (value != -1 && value < min) {
        throw new IllegalArgumentException(
            "config key \"" + key + "\" must be at least " + min + ", was " + value);
      }
    }
  }

  /** This config with {@code declared} in place of what it declares. */
  public ModelConfig withDeclared(Declared declared) {
    return new ModelConfig(
        description,
        labels,
        expectedSizeBytes,
        maxBatchSize,
        maxQueueDelayMicros,
        preferredBatchSizes,
        maxConcurrency,
        intraOpThreads,
        interOpThreads,
        declared);
  }

  /**
   * What a model's configuration file declares beyond the execution settings. Immutable and
   * thread-safe.
   *
   * @param file the configuration file, for messages; empty when there is none
   * @param inputs the declared inputs; empty to take them from the model file
   * @param outputs the declared outputs, the only ones served; empty to take them from the model
   *     file
   * @param versionPolicy which versions of the model are served
   * @param modelFileName the model file's name inside each version folder
   * @param ignored the settings of the file that ModelKeeper does not apply, for the startup log
   * @param triton the file as Triton's model configuration when it is a {@code config.pbtxt}, else
   *     null
   */
  @JsonIgnoreType // not a key of config.json
  public record Declared(
      String file,
      List<TensorConfig> inputs,
      List<TensorConfig> outputs,
      VersionPolicy versionPolicy,
      String modelFileName,
      List<String> ignored,
      dev.modelkeeper.onnx.triton.ModelConfig triton) {

    /** Nothing declared: tensors from the model file, every version, {@code model.onnx}. */
    public static final Declared NONE =
        new Declared(
            "",
            List.of(),
            List.of(),
            VersionPolicy.ALL,
            ModelRepository.MODEL_FILE,
            List.of(),
            null);

    public Declared {
      file = file == null ? "" : file;
      inputs = List.copyOf(inputs);
      outputs = List.copyOf(outputs);
      ignored = List.copyOf(ignored);
    }

    /**
     * The tensors the model is served with: the model file's {@code actual} specs when nothing is
     * declared, else the declared ones (the batch dimension, -1, first when {@code maxBatchSize} is
     * above 0), checked against {@code actual}.
     *
     * @param what "input" or "output", for messages
     * @throws IllegalArgumentException naming the file and tensor when a declared tensor is not in
     *     the model file, or has another element type or a shape the model file contradicts; or
     *     when a model input is not declared
     */
    public List<TensorSpec> served(
        String what, List<TensorConfig> declared, List<TensorSpec> actual, int maxBatchSize) {
      if (declared.isEmpty()) {
        return actual;
      }
      Map<String, TensorSpec> byName = new LinkedHashMap<>();
      for (TensorSpec s : actual) {
        byName.put(s.name(), s);
      }
      List<TensorSpec> out = new ArrayList<>();
      for (TensorConfig c : declared) {
        TensorSpec a = byName.remove(c.name());
        if (a == null) {
          throw new IllegalArgumentException(
              file
                  + " declares "
                  + what
                  + " '"
                  + c.name()
                  + "', which the model file does not"
                  + " have (its "
                  + what
                  + "s: "
                  + names(actual)
                  + ")");
        }
        if (a.datatype() != c.datatype()) {
          throw new IllegalArgumentException(
              file
                  + " declares "
                  + what
                  + " '"
                  + c.name()
                  + "' as "
                  + c.datatype()
                  + ", the model file has "
                  + a.datatype());
        }
        List<Long> model = batched(c.modelDims(), maxBatchSize);
        boolean fixedBatch = maxBatchSize > 0 && !a.shape().isEmpty() && a.shape().get(0) >= 0;
        if (fixedBatch || !fits(model, a.shape())) {
          throw new IllegalArgumentException(
              file
                  + " declares "
                  + what
                  + " '"
                  + c.name()
                  + "' with "
                  + (c.hasReshape() ? "reshape " : "dims ")
                  + c.modelDims()
                  + (maxBatchSize > 0
                      ? " after a batch dimension (max_batch_size "
                          + maxBatchSize
                          + "), that is "
                          + model
                      : "")
                  + ", the model file has "
                  + a.shape()
                  + " (-1 = any size)");
        }
        out.add(new TensorSpec(c.name(), c.datatype(), batched(c.dims(), maxBatchSize)));
      }
      if (what.equals("input") && !byName.isEmpty()) {
        throw new IllegalArgumentException(
            file + " leaves out input(s) " + byName.keySet() + " of the model file");
      }
      return out;
    }

    private static List<Long> batched(List<Long> dims, int maxBatchSize) {
      if (maxBatchSize <= 0) {
        return dims;
      }
      List<Long> out = new ArrayList<>(dims.size() + 1);
      out.add(-1L);
      out.addAll(dims);
      return out;
    }

    private static boolean fits(List<Long> declared, List<Long> actual) {
      if (declared.size() != actual.size()) {
        return false;
      }
      for (int i = 0; i < declared.size(); i++) {
        long d = declared.get(i);
        long a = actual.get(i);
        if (d >= 0 && a >= 0 && d != a) {
          return false;
        }
      }
      return true;
    }

    private static List<String> names(List<TensorSpec> specs) {
      List<String> out = new ArrayList<>();
      for (TensorSpec s : specs) {
        out.add(s.name());
      }
      return out;
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
      for (String unset : UNSET_WHEN_ABSENT) { // EMPTY's -1 settings are not written
        if (!merged.has(unset)) {
          merged.put(unset, -1);
        }
      }
      for (var e : given.properties()) {
        if (!e.getValue().isNull()) {
          merged.set(e.getKey(), e.getValue());
        }
      }
      return JSON.treeToValue(merged, ModelConfig.class);
    } catch (JsonParseException e) {
      throw new IllegalArgumentException(
          "not valid JSON at line "
              + e.getLocation().getLineNr()
              + ", column "
              + e.getLocation().getColumnNr()
              + ": "
              + e.getOriginalMessage(),
          e);
    } catch (JsonMappingException e) {
      if (e.getCause() instanceof IllegalArgumentException) {
        throw (IllegalArgumentException) e.getCause();
      }
      throw new IllegalArgumentException(
          "config key \"" + path(e) + "\" has the wrong type" + expected(e), e);
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

  /** What a key of the wrong type should have held, in JSON's words, never a Java class. */
  private static String expected(JsonMappingException e) {
    if (!(e instanceof MismatchedInputException)) {
      return "";
    }
    Class<?> type = ((MismatchedInputException) e).getTargetType();
    if (type == null) {
      return "";
    }
    if (type == String.class) {
      return ": expected a string";
    }
    if (type == int.class || type == long.class || type == Integer.class || type == Long.class) {
      return ": expected a whole number";
    }
    if (type == double.class || type == float.class || type == Double.class) {
      return ": expected a number";
    }
    if (type == boolean.class || type == Boolean.class) {
      return ": expected true or false";
    }
    if (Collection.class.isAssignableFrom(type) || type.isArray()) {
      return ": expected a list";
    }
    return ": expected an object";
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
