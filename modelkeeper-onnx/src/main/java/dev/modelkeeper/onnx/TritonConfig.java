package dev.modelkeeper.onnx;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import com.google.protobuf.util.JsonFormat;
import dev.modelkeeper.onnx.triton.DataType;
import dev.modelkeeper.onnx.triton.ModelDynamicBatching;
import dev.modelkeeper.onnx.triton.ModelInput;
import dev.modelkeeper.onnx.triton.ModelInstanceGroup;
import dev.modelkeeper.onnx.triton.ModelOutput;
import dev.modelkeeper.onnx.triton.ModelParameter;
import dev.modelkeeper.onnx.triton.ModelVersionPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Reads a Triton-layout model configuration, {@code <repository>/<model>/config.pbtxt} in
 * protobuf's text format, into a {@link ModelConfig}. Stateless and thread-safe.
 *
 * <p>What is applied: {@code name} (must match the folder), {@code platform}/{@code backend} (one
 * of the {@link ModelBackends}), {@code max_batch_size}, {@code input} and {@code output} ({@code
 * data_type}, {@code dims}, {@code reshape}, {@code optional}, {@code label_filename}), {@code
 * version_policy}, {@code instance_group.count} (runs at once), {@code dynamic_batching} ({@code
 * preferred_batch_size}, {@code max_queue_delay_microseconds}), {@code default_model_filename},
 * {@code model_warmup} (run as the last step of a load) and the ONNX Runtime parameters {@code
 * intra_op_thread_count} and {@code inter_op_thread_count}. What ModelKeeper does not serve is
 * refused with {@link UnsupportedFeatureException} naming the feature: ensembles, backends not on
 * the class path, sequence batching and decoupled models ({@link #unsupported}); every other
 * setting parses and is reported in {@link ModelConfig.Declared#ignored()}.
 */
public final class TritonConfig {

  /** The file name of a model's configuration inside its folder. */
  public static final String FILE_NAME = "config.pbtxt";

  /** The platform name a completed configuration reports. */
  public static final String PLATFORM = "onnxruntime_onnx";

  /** The backend name a completed configuration reports. */
  public static final String BACKEND = "onnxruntime";

  private static final long MAX_LABEL_FILE_BYTES = 4 * 1024 * 1024;

  private static final Set<String> APPLIED =
      Set.of(
          "name",
          "platform",
          "backend",
          "version_policy",
          "max_batch_size",
          "input",
          "output",
          "instance_group",
          "dynamic_batching",
          "default_model_filename",
          "parameters",
          "model_warmup");
  private static final Set<String> APPLIED_INPUT =
      Set.of("name", "data_type", "dims", "reshape", "optional");
  private static final Set<String> APPLIED_OUTPUT =
      Set.of("name", "data_type", "dims", "reshape", "label_filename");
  private static final Set<String> APPLIED_INSTANCES = Set.of("name", "count", "kind");
  private static final Set<String> APPLIED_BATCHING =
      Set.of("preferred_batch_size", "max_queue_delay_microseconds");
  private static final Set<String> APPLIED_PARAMETERS =
      Set.of("intra_op_thread_count", "inter_op_thread_count");

  /** Triton's data types and their datatypes (STRING is BYTES). */
  private static final Map<DataType, Datatype> TYPES =
      Map.ofEntries(
          Map.entry(DataType.TYPE_BOOL, Datatype.BOOL),
          Map.entry(DataType.TYPE_UINT8, Datatype.UINT8),
          Map.entry(DataType.TYPE_UINT16, Datatype.UINT16),
          Map.entry(DataType.TYPE_UINT32, Datatype.UINT32),
          Map.entry(DataType.TYPE_UINT64, Datatype.UINT64),
          Map.entry(DataType.TYPE_INT8, Datatype.INT8),
          Map.entry(DataType.TYPE_INT16, Datatype.INT16),
          Map.entry(DataType.TYPE_INT32, Datatype.INT32),
          Map.entry(DataType.TYPE_INT64, Datatype.INT64),
          Map.entry(DataType.TYPE_FP16, Datatype.FP16),
          Map.entry(DataType.TYPE_FP32, Datatype.FP32),
          Map.entry(DataType.TYPE_FP64, Datatype.FP64),
          Map.entry(DataType.TYPE_BF16, Datatype.BF16),
          Map.entry(DataType.TYPE_STRING, Datatype.BYTES));

  private static final Map<Datatype, DataType> TRITON_TYPES = new EnumMap<>(Datatype.class);

  static {
    TYPES.forEach((triton, datatype) -> TRITON_TYPES.put(datatype, triton));
  }

  private TritonConfig() {}

  /**
   * Parses the text of {@code file}, the configuration of the model in folder {@code modelDir}.
   *
   * @throws IllegalArgumentException with the line and column of a syntax error, an unknown field
   *     or a block given twice; or naming the setting that cannot be served
   */
  public static ModelConfig parse(String text, Path file, Path modelDir) {
    dev.modelkeeper.onnx.triton.ModelConfig.Builder b =
        dev.modelkeeper.onnx.triton.ModelConfig.newBuilder();
    try {
      TextFormat.Parser.newBuilder()
          .setSingularOverwritePolicy(
              TextFormat.Parser.SingularOverwritePolicy.FORBID_SINGULAR_OVERWRITES)
          .build()
          .merge(text, b);
    } catch (TextFormat.ParseException e) {
      String message =
          e.getMessage()
              .replaceFirst("^-?\\d+:-?\\d+: ", "")
              .replaceFirst(
                  "^Non-repeated field \"[\\w.]*?(\\w+)\" cannot be overwritten\\.?$",
                  "\"$1\" is given more than once");
      throw new IllegalArgumentException(
          "line " + e.getLine() + ", column " + e.getColumn() + ": " + message, e);
    }
    return of(b.build(), file.toString(), modelDir, modelDir.getFileName().toString());
  }

  /**
   * Parses the JSON form of a model configuration (protobuf's JSON mapping of Triton's {@code
   * ModelConfig}, as Triton's load requests carry it in their {@code config} parameter), the
   * configuration of model {@code name}; label files are read from {@code modelDir}.
   *
   * @throws IllegalArgumentException when the text is not such JSON (an unknown field, a wrong
   *     type), or as {@link #parse}
   */
  public static ModelConfig parseJson(String json, String name, Path modelDir) {
    return of(fromJson(json), "the config parameter", modelDir, name);
  }

  /**
   * The JSON form of a model configuration as Triton's message, not yet checked.
   *
   * @throws IllegalArgumentException when the text is not such JSON
   */
  public static dev.modelkeeper.onnx.triton.ModelConfig fromJson(String json) {
    dev.modelkeeper.onnx.triton.ModelConfig.Builder b =
        dev.modelkeeper.onnx.triton.ModelConfig.newBuilder();
    try {
      JsonFormat.parser().merge(json, b);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      String why =
          e.getMessage() == null
              ? "not a model configuration"
              : e.getMessage().replaceAll("(?:[a-z]+\\.)+[A-Za-z]+(?:Exception|Error): ", "");
      throw new IllegalArgumentException("not a valid model configuration in JSON: " + why, e);
    }
    return b.build();
  }

  /** {@code c} in protobuf's text format, as a {@code config.pbtxt} holds it. */
  public static String toText(dev.modelkeeper.onnx.triton.ModelConfig c) {
    return TextFormat.printer().printToString(c);
  }

  /**
   * Why a model with configuration {@code c} cannot be served by ModelKeeper, naming the feature;
   * null when nothing it asks for is out of reach.
   */
  public static String unsupported(dev.modelkeeper.onnx.triton.ModelConfig c) {
    if (c.getPlatform().equals("ensemble") || c.hasEnsembleScheduling()) {
      return "ensemble models (platform 'ensemble', ensemble_scheduling) are not served:"
          + " ModelKeeper runs each model on its own; call the steps in turn";
    }
    if (ModelBackends.of(c.getPlatform(), c.getBackend()) == null) {
      return (c.getBackend().isEmpty()
              ? "platform '" + c.getPlatform() + "'"
              : "backend '" + c.getBackend() + "'")
          + " is not served: ModelKeeper has the backends "
          + ModelBackends.names()
          + " (platform '"
          + PLATFORM
          + "' is ONNX Runtime's)";
    }
    if (c.hasSequenceBatching()) {
      return "sequence_batching is not offered by ModelKeeper; it serves each request on its own";
    }
    if (c.getModelTransactionPolicy().getDecoupled()) {
      return "decoupled models (model_transaction_policy decoupled: true) are not served:"
          + " ModelKeeper answers each request with exactly one response";
    }
    return null;
  }

  /**
   * The configuration {@code c} of model {@code name}, read from {@code file} (for messages), with
   * label files in {@code modelDir}.
   */
  private static ModelConfig of(
      dev.modelkeeper.onnx.triton.ModelConfig c, String file, Path modelDir, String folder) {
    if (!c.getName().isEmpty() && !c.getName().equals(folder)) {
      throw new IllegalArgumentException(
          "name '" + c.getName() + "' is not the model's folder name '" + folder + "'");
    }
    String unsupported = unsupported(c);
    if (unsupported != null) {
      throw new UnsupportedFeatureException(unsupported);
    }
    if (c.getMaxBatchSize() < 0) {
      throw new IllegalArgumentException(
          "max_batch_size must be 0 (no batch dimension) or more, was " + c.getMaxBatchSize());
    }
    List<String> ignored = new ArrayList<>();
    unapplied("", c, APPLIED, ignored);
    List<TensorConfig> inputs = new ArrayList<>();
    for (ModelInput in : c.getInputList()) {
      unapplied("input.", in, APPLIED_INPUT, ignored);
      inputs.add(
          tensor(
              "input",
              in.getName(),
              in.getDataType(),
              in.getDimsList(),
              in.hasReshape() ? in.getReshape().getShapeList() : null,
              in.getOptional(),
              List.of()));
    }
    List<TensorConfig> outputs = new ArrayList<>();
    List<String> labels = List.of();
    for (ModelOutput out : c.getOutputList()) {
      unapplied("output.", out, APPLIED_OUTPUT, ignored);
      List<String> outLabels =
          out.getLabelFilename().isEmpty()
              ? List.of()
              : labels(modelDir, out.getName(), out.getLabelFilename());
      if (labels.isEmpty()) {
        labels = outLabels;
      }
      outputs.add(
          tensor(
              "output",
              out.getName(),
              out.getDataType(),
              out.getDimsList(),
              out.hasReshape() ? out.getReshape().getShapeList() : null,
              false,
              outLabels));
    }
    int instances = 0;
    for (ModelInstanceGroup g : c.getInstanceGroupList()) {
      unapplied("instance_group.", g, APPLIED_INSTANCES, ignored);
      if (g.getKind() == ModelInstanceGroup.Kind.KIND_GPU) {
        ignored.add("instance_group.kind KIND_GPU (runs on the CPU)");
      }
      if (g.getCount() < 0) {
        throw new IllegalArgumentException(
            "instance_group count must be at least 1, was " + g.getCount());
      }
      instances += Math.max(1, g.getCount());
    }
    List<Integer> preferred = List.of();
    long delay = 0; // without dynamic_batching, nothing waits for company
    if (c.hasDynamicBatching()) {
      ModelDynamicBatching d = c.getDynamicBatching();
      unapplied("dynamic_batching.", d, APPLIED_BATCHING, ignored);
      preferred = d.getPreferredBatchSizeList();
      delay = d.getMaxQueueDelayMicroseconds();
      if (delay < 0) { // an unsigned value past Long.MAX_VALUE
        throw new IllegalArgumentException("max_queue_delay_microseconds is too large");
      }
    }
    for (String p : c.getParametersMap().keySet()) {
      if (!APPLIED_PARAMETERS.contains(p)) {
        ignored.add("parameters." + p);
      }
    }
    String modelFile = c.getDefaultModelFilename();
    if (modelFile.isEmpty()) {
      modelFile = ModelBackends.of(c.getPlatform(), c.getBackend()).defaultModelFileName();
    } else if (modelFile.contains("/") || modelFile.contains("\\") || modelFile.startsWith(".")) {
      throw new IllegalArgumentException(
          "default_model_filename must be a file name inside the version folder, was '"
              + modelFile
              + "'");
    }
    ModelConfig.Declared declared =
        new ModelConfig.Declared(file, inputs, outputs, versionPolicy(c), modelFile, ignored, c);
    return new ModelConfig(
        "",
        labels,
        -1,
        c.getMaxBatchSize(),
        delay,
        preferred,
        instances == 0 ? -1 : instances,
        threads(c.getParametersMap(), "intra_op_thread_count"),
        threads(c.getParametersMap(), "inter_op_thread_count"),
        declared);
  }

  /**
   * The configuration of a loaded model as Triton answers it: the model's {@code config.pbtxt} with
   * what it leaves out filled in, or, for a model without one, a configuration that describes how
   * it is served.
   *
   * @param name the name the model was asked for by (an alias or its own)
   * @param config the configuration the model was loaded with
   * @param metadata the model's metadata (its served inputs and outputs)
   * @param maxBatchSize the most rows a request may have, 0 when the model has no batch dimension
   * @param maxQueueDelayMicros how long a request waits for others to batch with, in microseconds
   * @param preferredBatchSizes batch sizes that run at once when reached
   * @param instances the most runs of the model at once
   */
  public static dev.modelkeeper.onnx.triton.ModelConfig completed(
      String name,
      ModelConfig config,
      ModelMetadata metadata,
      int maxBatchSize,
      long maxQueueDelayMicros,
      List<Integer> preferredBatchSizes,
      int instances) {
    dev.modelkeeper.onnx.triton.ModelConfig declared = config.declared().triton();
    dev.modelkeeper.onnx.triton.ModelConfig.Builder b =
        declared == null
            ? dev.modelkeeper.onnx.triton.ModelConfig.newBuilder()
            : declared.toBuilder();
    ModelBackend backend = ModelBackends.of(config);
    b.setName(name).setBackend(backend.name());
    if (backend.name().equals(BACKEND)) {
      b.setPlatform(PLATFORM);
    }
    if (declared == null) {
      b.setMaxBatchSize(maxBatchSize);
      b.setVersionPolicy(
          ModelVersionPolicy.newBuilder().setAll(ModelVersionPolicy.All.getDefaultInstance()));
      if (maxBatchSize > 1) {
        b.setDynamicBatching(
            ModelDynamicBatching.newBuilder()
                .addAllPreferredBatchSize(preferredBatchSizes)
                .setMaxQueueDelayMicroseconds(maxQueueDelayMicros));
      }
    } else if (!declared.hasVersionPolicy()) {
      b.setVersionPolicy(
          ModelVersionPolicy.newBuilder()
              .setLatest(ModelVersionPolicy.Latest.newBuilder().setNumVersions(1)));
    }
    int batch = b.getMaxBatchSize() > 0 ? 1 : 0;
    if (b.getInputCount() == 0) {
      for (TensorSpec s : metadata.inputs()) {
        b.addInput(
            ModelInput.newBuilder()
                .setName(s.name())
                .setDataType(dataType(s.datatype()))
                .addAllDims(withoutBatch(s, batch)));
      }
    }
    if (b.getOutputCount() == 0) {
      for (TensorSpec s : metadata.outputs()) {
        b.addOutput(
            ModelOutput.newBuilder()
                .setName(s.name())
                .setDataType(dataType(s.datatype()))
                .addAllDims(withoutBatch(s, batch)));
      }
    }
    if (b.getInstanceGroupCount() == 0) {
      b.addInstanceGroup(
          ModelInstanceGroup.newBuilder()
              .setName(name)
              .setCount(instances)
              .setKind(ModelInstanceGroup.Kind.KIND_CPU));
    } else {
      for (ModelInstanceGroup.Builder g : b.getInstanceGroupBuilderList()) {
        g.setKind(ModelInstanceGroup.Kind.KIND_CPU).setCount(Math.max(1, g.getCount()));
        if (g.getName().isEmpty()) {
          g.setName(name);
        }
      }
    }
    if (b.getDefaultModelFilename().isEmpty()) {
      b.setDefaultModelFilename(config.declared().modelFileName());
    }
    return b.build();
  }

  /** The dims of {@code s}: its shape without the first {@code batch} (0 or 1) dimension. */
  private static List<Long> withoutBatch(TensorSpec s, int batch) {
    return s.shape().subList(Math.min(batch, s.shape().size()), s.shape().size());
  }

  private static VersionPolicy versionPolicy(dev.modelkeeper.onnx.triton.ModelConfig c) {
    if (!c.hasVersionPolicy()) {
      return VersionPolicy.LATEST_ONE;
    }
    ModelVersionPolicy p = c.getVersionPolicy();
    switch (p.getPolicyChoiceCase()) {
      case ALL:
        return VersionPolicy.ALL;
      case SPECIFIC:
        if (p.getSpecific().getVersionsCount() == 0) {
          throw new IllegalArgumentException("version_policy specific lists no versions");
        }
        return VersionPolicy.specific(p.getSpecific().getVersionsList());
      case LATEST:
        int n = p.getLatest().getNumVersions();
        if (n < 1) {
          throw new IllegalArgumentException(
              "version_policy latest needs num_versions of at least 1, was "
                  + Integer.toUnsignedString(n));
        }
        return VersionPolicy.latest(n);
      default:
        return VersionPolicy.LATEST_ONE;
    }
  }

  /** A declared tensor; {@code reshaping} null when the configuration gives no reshape. */
  private static TensorConfig tensor(
      String what,
      String name,
      DataType type,
      List<Long> dims,
      List<Long> reshaping,
      boolean optional,
      List<String> labels) {
    boolean hasReshape = reshaping != null;
    List<Long> reshape = hasReshape ? reshaping : List.of();
    if (name.isEmpty()) {
      throw new IllegalArgumentException("an " + what + " has no name");
    }
    if (type == DataType.TYPE_INVALID) {
      throw new IllegalArgumentException(what + " '" + name + "' needs a data_type");
    }
    Datatype datatype = datatype(type);
    if (datatype == null) {
      throw new IllegalArgumentException(
          "data_type "
              + type.name()
              + " of "
              + what
              + " '"
              + name
              + "' is not supported; supported: "
              + TYPES.keySet().stream()
                  .sorted()
                  .map(DataType::name)
                  .collect(Collectors.joining(", ")));
    }
    for (long d : dims) {
      if (d < -1) {
        throw new IllegalArgumentException(
            what + " '" + name + "' has dims " + dims + "; a dimension is -1 (any) or more");
      }
    }
    if (hasReshape
        && elements(dims) >= 0
        && elements(reshape) >= 0
        && elements(dims) != elements(reshape)) {
      throw new IllegalArgumentException(
          what
              + " '"
              + name
              + "' has dims "
              + dims
              + " and reshape "
              + reshape
              + ", which hold different numbers of elements");
    }
    return new TensorConfig(name, datatype, dims, reshape, optional, labels, hasReshape);
  }

  /** The element count of {@code dims}, or -1 when one of them is any size. */
  private static long elements(List<Long> dims) {
    long n = 1;
    for (long d : dims) {
      if (d < 0) {
        return -1;
      }
      n *= d;
    }
    return n;
  }

  /** ModelKeeper's datatype for a Triton data type; null when it has none. */
  static Datatype datatype(DataType type) {
    return TYPES.get(type);
  }

  /** The Triton data type of one of ModelKeeper's datatypes. */
  public static DataType dataType(Datatype datatype) {
    return TRITON_TYPES.get(datatype);
  }

  private static int threads(Map<String, ModelParameter> parameters, String key) {
    ModelParameter p = parameters.get(key);
    if (p == null) {
      return -1;
    }
    try {
      int n = Integer.parseInt(p.getStringValue().trim());
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "parameters "
            + key
            + " must be a whole number of at least 1, was '"
            + p.getStringValue()
            + "'");
  }

  private static List<String> labels(Path modelDir, String output, String fileName) {
    Path file = modelDir.resolve(fileName).normalize();
    if (!file.startsWith(modelDir)) {
      throw new IllegalArgumentException(
          "label_filename '"
              + fileName
              + "' of output '"
              + output
              + "' lies outside the model folder");
    }
    try {
      if (Files.size(file) > MAX_LABEL_FILE_BYTES) {
        throw new IllegalArgumentException(
            "label file " + file + " is larger than " + MAX_LABEL_FILE_BYTES + " bytes");
      }
      List<String> lines = new ArrayList<>(Files.readAllLines(file, StandardCharsets.UTF_8));
      while (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
        lines.remove(lines.size() - 1);
      }
      return lines;
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot read label file " + file + " of output '" + output + "'", e);
    }
  }

  /** Adds the fields set in {@code m} that are not in {@code applied} to {@code out}. */
  private static void unapplied(String prefix, Message m, Set<String> applied, List<String> out) {
    for (FieldDescriptor f : m.getAllFields().keySet()) {
      String name = prefix + f.getName();
      if (!applied.contains(f.getName()) && !out.contains(name)) {
        out.add(name);
      }
    }
  }
}
