package dev.modelkeeper.python;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.util.JsonFormat;
import dev.modelkeeper.core.LoadBackoffException;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotLoadedException;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InferenceException;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelCaller;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TensorConfig;
import dev.modelkeeper.onnx.TensorSpec;
import dev.modelkeeper.onnx.triton.ModelInstanceGroup;
import dev.modelkeeper.onnx.triton.ModelParameter;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A Triton Python-backend model: {@code instance_group} count child processes, each running the
 * model's {@code model.py} ({@link PythonProcess}), each serving one request at a time. Its memory
 * cost is what its processes hold, measured after {@code initialize}; closing it calls {@code
 * finalize()} in each and the processes exit (killed after the drain timeout), which returns all of
 * it. A process that exits or hangs fails the request it was serving, naming the model and the exit
 * code or the timeout, and starts again at the next request. Thread-safe.
 */
final class PythonModel implements InferenceModel {

  private static final System.Logger LOG = System.getLogger(PythonModel.class.getName());
  private static final ObjectMapper JSON = PythonProcess.json();

  /**
   * The {@code config.pbtxt} parameter bounding one {@code execute} call, in seconds (default 60):
   * a process that takes longer is stopped, the request fails naming the timeout, and the next
   * request starts the process again.
   */
  static final String EXECUTE_TIMEOUT = "execute_timeout_seconds";

  /**
   * The {@code config.pbtxt} parameter naming the model's own interpreter (a venv's {@code
   * bin/python}, say) instead of the server's {@code --python}.
   */
  static final String INTERPRETER = "python_interpreter";

  /** Restarts of a failing process without a back-off; see {@code Instance.failed}. */
  static final int FREE_RESTARTS = 2;

  private final String id;
  private final ModelArtifact artifact;
  private final PythonBackend.Settings settings;
  private final ModelCaller caller;
  private final ModelMetadata metadata;

  /** The inputs {@code config.pbtxt} declares {@code optional}. */
  private final Set<String> optional;

  private final String modelConfigJson;
  private final BlockingQueue<Instance> idle;
  private final List<Instance> all;
  private final long sizeBytes;
  private volatile boolean closed;

  private PythonModel(
      ModelArtifact artifact,
      PythonBackend.Settings settings,
      ModelCaller caller,
      ModelMetadata metadata,
      String modelConfigJson,
      List<Instance> all,
      long sizeBytes) {
    this.id = artifact.id();
    this.artifact = artifact;
    this.settings = settings;
    this.caller = caller;
    this.metadata = metadata;
    this.optional =
        artifact.config().declared().inputs().stream()
            .filter(TensorConfig::optional)
            .map(TensorConfig::name)
            .collect(Collectors.toUnmodifiableSet());
    this.modelConfigJson = modelConfigJson;
    this.all = List.copyOf(all);
    this.idle = new ArrayBlockingQueue<>(all.size(), false, all);
    this.sizeBytes = sizeBytes;
  }

  /**
   * Starts the model's processes and initializes each.
   *
   * @throws ModelUnservableException when {@code model.py} fails to import or to initialize (its
   *     Python error's last line), or declares what cannot be served
   * @throws ModelLoadException when the interpreter cannot be started or does not answer
   */
  static PythonModel load(
      ModelArtifact artifact, PythonBackend.Settings settings, ModelCaller caller) {
    String id = artifact.id();
    dev.modelkeeper.onnx.triton.ModelConfig triton = artifact.config().declared().triton();
    if (triton == null) {
      throw new ModelUnservableException(
          "model '" + id + "' needs a config.pbtxt with backend: \"python\"", null, false);
    }
    int count = 0;
    for (ModelInstanceGroup g : triton.getInstanceGroupList()) {
      count += Math.max(1, g.getCount());
    }
    count = Math.max(1, count);
    settings = settings.withExecuteTimeout(executeTimeout(triton, id, settings.executeTimeout()));
    ModelParameter interpreter = triton.getParametersMap().get(INTERPRETER);
    if (interpreter != null && !interpreter.getStringValue().isBlank()) {
      settings = settings.withPython(interpreter.getStringValue().trim());
    }
    String configJson = configJson(triton, id);
    List<Instance> started = new ArrayList<>();
    try {
      String completed = configJson;
      for (int i = 0; i < count; i++) {
        Instance instance = new Instance(i);
        started.add(instance);
        completed = instance.start(artifact, settings, configJson, id);
      }
      long bytes = 0;
      for (Instance i : started) {
        bytes += Math.max(0, i.process.residentBytes());
      }
      return new PythonModel(
          artifact, settings, caller, metadata(artifact, completed), configJson, started, bytes);
    } catch (RuntimeException e) {
      for (Instance i : started) {
        i.stop(Duration.ofSeconds(2));
      }
      throw e;
    }
  }

  /**
   * The {@value #EXECUTE_TIMEOUT} parameter of {@code config.pbtxt} (seconds), else {@code
   * otherwise}.
   */
  private static Duration executeTimeout(
      dev.modelkeeper.onnx.triton.ModelConfig triton, String id, Duration otherwise) {
    ModelParameter p = triton.getParametersMap().get(EXECUTE_TIMEOUT);
    if (p == null) {
      return otherwise;
    }
    try {
      double seconds = Double.parseDouble(p.getStringValue().trim());
      if (seconds > 0) {
        return Duration.ofMillis((long) (seconds * 1000));
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new ModelUnservableException(
        "config.pbtxt of model '"
            + id
            + "': parameter "
            + EXECUTE_TIMEOUT
            + " must be a number of seconds above 0, was '"
            + p.getStringValue()
            + "'",
        null,
        false);
  }

  /** Triton's JSON of the configuration, as {@code args['model_config']} carries it. */
  private static String configJson(dev.modelkeeper.onnx.triton.ModelConfig triton, String id) {
    try {
      String text = JsonFormat.printer().preservingProtoFieldNames().print(triton);
      ObjectNode node = (ObjectNode) JSON.readTree(text);
      if (!node.has("name")) {
        node.put("name", id.substring(0, id.indexOf('/')));
      }
      if (!node.has("max_batch_size")) {
        node.put("max_batch_size", 0);
      }
      for (String key : List.of("input", "output")) {
        if (!node.has(key)) {
          node.putArray(key);
        }
        for (JsonNode t : node.get(key)) {
          numbers((ObjectNode) t, "dims");
          if (t.has("reshape")) {
            numbers((ObjectNode) t.get("reshape"), "shape");
          }
        }
      }
      return JSON.writeValueAsString(node);
    } catch (IOException e) {
      throw new ModelLoadException("cannot write the configuration of '" + id + "' as JSON", e);
    }
  }

  /** int64 fields, which protobuf's JSON writes as strings, as the numbers Triton gives. */
  private static void numbers(ObjectNode node, String field) {
    JsonNode values = node.get(field);
    if (values instanceof ArrayNode) {
      ArrayNode out = JSON.createArrayNode();
      values.forEach(v -> out.add(v.asLong()));
      node.set(field, out);
    }
  }

  /** The metadata from the configuration (as completed by {@code auto_complete_config}). */
  private static ModelMetadata metadata(ModelArtifact artifact, String configJson) {
    try {
      JsonNode c = JSON.readTree(configJson);
      boolean batched = c.path("max_batch_size").asInt(0) > 0;
      return new ModelMetadata(
          artifact.name(),
          artifact.version(),
          PythonBackend.NAME,
          specs(c.path("input"), batched, artifact.id()),
          specs(c.path("output"), batched, artifact.id()),
          "",
          List.of());
    } catch (IOException e) {
      throw new ModelLoadException("the configuration of '" + artifact.id() + "' is not JSON", e);
    }
  }

  private static List<TensorSpec> specs(JsonNode tensors, boolean batched, String id) {
    List<TensorSpec> out = new ArrayList<>();
    for (JsonNode t : tensors) {
      String type = t.path("data_type").asText("");
      String name = type.startsWith("TYPE_") ? type.substring(5) : type;
      Datatype d = Datatype.tryParse(name.equals("STRING") ? "BYTES" : name);
      if (d == null) {
        throw new ModelUnservableException(
            "tensor '"
                + t.path("name").asText()
                + "' of model '"
                + id
                + "' has data_type '"
                + type
                + "', which is not served",
            null,
            true);
      }
      List<Long> shape = new ArrayList<>();
      if (batched) {
        shape.add(-1L);
      }
      t.path("dims").forEach(v -> shape.add(v.asLong()));
      out.add(new TensorSpec(t.path("name").asText(), d, shape));
    }
    return out;
  }

  @Override
  public ModelMetadata metadata() {
    return metadata;
  }

  @Override
  public ModelConfig config() {
    return artifact.config();
  }

  @Override
  public long sizeBytes() {
    return sizeBytes;
  }

  /** The pids of its processes, for tests and the log. */
  List<Long> pids() {
    List<Long> out = new ArrayList<>();
    for (Instance i : all) {
      PythonProcess p = i.process;
      if (p != null && p.alive()) {
        out.add(p.pid());
      }
    }
    return out;
  }

  @Override
  public Map<String, Tensor> infer(Map<String, Tensor> inputs, Set<String> requestedOutputs) {
    return inferEach(List.of(inputs), requestedOutputs).get(0);
  }

  /**
   * Checks a request's inputs against the configuration, as Triton does before {@code execute}:
   * every input declared, of its datatype and shape, none missing unless optional, and no more rows
   * than {@code max_batch_size}.
   *
   * @throws InvalidInputException naming the input and what is wrong
   */
  private void validate(Map<String, Tensor> inputs) {
    for (String name : inputs.keySet()) {
      if (metadata.inputs().stream().noneMatch(s -> s.name().equals(name))) {
        throw new InvalidInputException(
            "model '"
                + id
                + "' has no input named '"
                + name
                + "'; its inputs are "
                + metadata.inputs().stream().map(TensorSpec::name).toList());
      }
    }
    int maxBatch = artifact.config().declared().triton().getMaxBatchSize();
    for (TensorSpec spec : metadata.inputs()) {
      Tensor t = inputs.get(spec.name());
      if (t == null) {
        if (!optional.contains(spec.name())) {
          throw new InvalidInputException(
              "model '" + id + "' needs input '" + spec.name() + "', which is missing");
        }
        continue;
      }
      spec.checkDatatype(id, t);
      spec.checkShape(id, t.shape());
      if (maxBatch > 0 && t.shape()[0] > maxBatch) {
        throw new InvalidInputException(
            "a batch of "
                + t.shape()[0]
                + " rows is more than model '"
                + id
                + "' takes: its configuration (config.pbtxt) sets max_batch_size "
                + maxBatch);
      }
    }
  }

  /** Batched requests reach {@code execute} as Triton's Python backend hands them: a list. */
  @Override
  public boolean takesRequestsTogether() {
    return true;
  }

  @Override
  public List<Map<String, Tensor>> inferEach(
      List<Map<String, Tensor>> requests, Set<String> requestedOutputs) {
    if (closed) {
      throw new ModelNotLoadedException("model '" + id + "' was unloaded");
    }
    for (Map<String, Tensor> inputs : requests) {
      validate(inputs);
    }
    Instance instance;
    try {
      instance = idle.poll(settings.executeTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InferenceException("interrupted waiting for model '" + id + "'", null);
    }
    if (instance == null) {
      throw new InferenceException(
          "no instance of model '"
              + id
              + "' was free within "
              + settings.executeTimeout().toSeconds()
              + " s",
          null);
    }
    try {
      return instance.execute(this, requests, requestedOutputs);
    } finally {
      idle.add(instance);
    }
  }

  /**
   * Runs a call of another model that {@code process}'s {@code execute} made (Triton's business
   * logic scripting) through the server, and the answer to send back: the outputs in the process's
   * region of call answers, or the failure's message.
   */
  private ObjectNode answer(PythonProcess process, JsonNode call) {
    ObjectNode reply = JSON.createObjectNode();
    try {
      ByteBuffer region = process.outputs(call.path("output_size").asLong());
      Map<String, Tensor> inputs = new LinkedHashMap<>();
      for (JsonNode spec : call.path("inputs")) {
        Tensor t = Instance.tensor(spec, region, id);
        inputs.put(t.name(), t);
      }
      Set<String> requested = new LinkedHashSet<>();
      call.path("requested_outputs").forEach(o -> requested.add(o.asText()));
      Map<String, Tensor> outputs =
          caller.infer(
              call.path("model_name").asText(),
              call.path("model_version").asText(""),
              inputs,
              requested);
      Encoded encoded = Encoded.of(outputs.values());
      encoded.writeTo(
          process.callAnswers(encoded.total()), reply.put("ok", true).putArray("outputs"));
      reply.put("bls_size", process.callAnswersSize());
      return reply;
    } catch (IOException | RuntimeException e) {
      return JSON.createObjectNode()
          .put("ok", false)
          .put("error", e.getMessage() == null ? e.toString() : e.getMessage());
    }
  }

  @Override
  public void clearCache() {
    closed = true;
    for (Instance i : all) {
      i.stop(settings.drainTimeout());
    }
  }

  /**
   * Tensors in the binary layout, ready for a shared-memory region, and their total size.
   *
   * @param tensors the tensors, in order
   * @param bytes each one's bytes
   * @param total their sum
   */
  private record Encoded(List<Tensor> tensors, List<byte[]> bytes, long total) {

    static Encoded of(Collection<Tensor> tensors) {
      List<byte[]> bytes = new ArrayList<>(tensors.size());
      long total = 0;
      for (Tensor t : tensors) {
        ByteBuffer raw = t.binary();
        byte[] b;
        if (raw != null) {
          b = new byte[raw.remaining()];
          raw.duplicate().get(b);
        } else {
          b = t.datatype().toBinary(t.data());
        }
        bytes.add(b);
        total += b.length;
      }
      return new Encoded(List.copyOf(tensors), bytes, total);
    }

    /** Writes them at {@code region}'s position, each described to the child in {@code specs}. */
    void writeTo(ByteBuffer region, ArrayNode specs) {
      for (int i = 0; i < tensors.size(); i++) {
        Tensor t = tensors.get(i);
        byte[] b = bytes.get(i);
        ObjectNode s = specs.addObject().put("name", t.name()).put("datatype", t.datatype().name());
        ArrayNode shape = s.putArray("shape");
        for (long d : t.shape()) {
          shape.add(d);
        }
        s.put("offset", region.position()).put("length", b.length);
        region.put(b);
      }
    }
  }

  /** One process and its restarts. Used by one request at a time. */
  private static final class Instance {
    final int index;
    PythonProcess process;

    /** Requests in a row whose process exited or hung; 0 after an answer. */
    int failures;

    /** When the process may start again ({@link System#nanoTime}); the back-off's end. */
    long restartAt = System.nanoTime();

    Instance(int index) {
      this.index = index;
    }

    /**
     * After a request whose process exited or hung: the next request starts it again at once the
     * first {@value #FREE_RESTARTS} times in a row, then only after a back-off of 1 s, doubling up
     * to 30 s, and requests meanwhile are answered 503 with {@code Retry-After}.
     */
    void failed() {
      failures++;
      if (failures > FREE_RESTARTS) {
        long seconds = Math.min(30, 1L << Math.min(5, failures - FREE_RESTARTS - 1));
        restartAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      }
    }

    /** Starts and initializes a process; the configuration as the model completed it. */
    String start(
        ModelArtifact artifact, PythonBackend.Settings settings, String configJson, String id) {
      try {
        process =
            PythonProcess.start(settings.python(), settings.runtime(), artifact.modelFile(), id);
      } catch (IOException e) {
        throw new ModelLoadException(
            "cannot start the Python interpreter '"
                + settings.python()
                + "' for model '"
                + id
                + "': "
                + e.getMessage()
                + " (set it with --python)",
            null);
      }
      Path versionDir = artifact.modelFile().getParent();
      ObjectNode m = JSON.createObjectNode().put("op", "initialize");
      m.put("input_shm", process.inputFile().toString());
      m.put("output_shm", process.outputFile().toString());
      m.put("bls_shm", process.callFile().toString());
      ObjectNode args = m.putObject("args");
      args.put("model_config", configJson);
      args.put("model_instance_kind", "CPU");
      args.put("model_instance_name", artifact.name() + "_0_" + index);
      args.put("model_instance_device_id", "0");
      args.put("model_repository", versionDir.getParent().toString());
      args.put("model_version", artifact.version());
      args.put("model_name", artifact.name());
      JsonNode answer;
      try {
        answer = process.call(m, settings.initializeTimeout());
      } catch (PythonProcess.Failure e) {
        process.close();
        throw new ModelLoadException(e.getMessage(), null);
      }
      if (!answer.path("ok").asBoolean()) {
        process.close(); // the runner exits after a failed initialize
        throw new ModelUnservableException(
            "model '"
                + id
                + "' failed to initialize ("
                + artifact.modelFile().getFileName()
                + "): "
                + answer.path("error").asText(),
            null,
            false);
      }
      return answer.path("model_config").asText(configJson);
    }

    /** One {@code execute} call with {@code requests}; the outputs of each, in order. */
    List<Map<String, Tensor>> execute(
        PythonModel model, List<Map<String, Tensor>> requests, Set<String> requested) {
      String id = model.id;
      if (process == null || !process.alive()) {
        if (process != null) {
          process.close();
        }
        long wait = restartAt - System.nanoTime();
        if (wait > 0) {
          Duration retry = Duration.ofNanos(wait).plusMillis(999).truncatedTo(ChronoUnit.SECONDS);
          throw new LoadBackoffException(
              "the process of model '"
                  + id
                  + "' failed "
                  + failures
                  + " requests in a row; it starts again in "
                  + retry.toSeconds()
                  + " s",
              retry,
              null);
        }
        LOG.log(Level.INFO, "model ''{0}'': starting its process {1} again", id, index);
        try {
          start(model.artifact, model.settings, model.modelConfigJson, id);
        } catch (RuntimeException e) {
          throw new InferenceException(e.getMessage(), null);
        }
      }
      try {
        List<Encoded> encoded = new ArrayList<>(requests.size());
        long total = 0;
        for (Map<String, Tensor> inputs : requests) {
          Encoded e = Encoded.of(inputs.values());
          encoded.add(e);
          total += e.total();
        }
        ByteBuffer region = process.inputs(total);
        ObjectNode m = JSON.createObjectNode().put("op", "execute").put("input_size", total);
        ArrayNode all = m.putArray("requests");
        for (Encoded e : encoded) {
          ObjectNode request = all.addObject();
          e.writeTo(region, request.putArray("inputs"));
          ArrayNode outs = request.putArray("requested_outputs");
          for (String o : requested.isEmpty() ? outputNames(model) : requested) {
            outs.add(o);
          }
        }
        PythonProcess p = process;
        JsonNode answer = p.call(m, model.settings.executeTimeout(), call -> model.answer(p, call));
        if (!answer.path("ok").asBoolean()) {
          throw new InferenceException(
              "model '" + id + "' raised in execute: " + answer.path("error").asText(), null);
        }
        failures = 0;
        for (JsonNode response : answer.path("responses")) {
          if (response.has("error")) {
            String message = "model '" + id + "': " + response.path("error").asText();
            if (response.path("code").asInt() == 3) { // TritonError.INVALID_ARG
              throw new InvalidInputException(message);
            }
            throw new InferenceException(message, null);
          }
        }
        ByteBuffer out = process.outputs(answer.path("output_size").asLong());
        List<Map<String, Tensor>> results = new ArrayList<>(requests.size());
        for (JsonNode response : answer.path("responses")) {
          Map<String, Tensor> result = new LinkedHashMap<>();
          for (JsonNode o : response.path("outputs")) {
            result.put(o.path("name").asText(), tensor(o, out, id));
          }
          results.add(result);
        }
        return results;
      } catch (PythonProcess.Failure e) {
        failed();
        throw new InferenceException(e.getMessage(), null);
      } catch (IOException e) {
        throw new InferenceException(
            "model '" + id + "': its shared memory failed: " + e.getMessage(), null);
      }
    }

    private static List<String> outputNames(PythonModel model) {
      return model.metadata.outputs().stream().map(TensorSpec::name).toList();
    }

    static Tensor tensor(JsonNode o, ByteBuffer out, String id) {
      String name = o.path("name").asText();
      Datatype d = Datatype.tryParse(o.path("datatype").asText());
      if (d == null) {
        throw new InferenceException(
            "model '" + id + "' returned output '" + name + "' of an unknown type", null);
      }
      JsonNode shapeNode = o.path("shape");
      long[] shape = new long[shapeNode.size()];
      for (int i = 0; i < shape.length; i++) {
        shape[i] = shapeNode.get(i).asLong();
      }
      int offset = o.path("offset").asInt();
      int length = o.path("length").asInt();
      ByteBuffer slice = out.duplicate().position(offset).limit(offset + length).slice();
      if (d == Datatype.BYTES) {
        List<byte[]> elements = new ArrayList<>();
        slice.order(ByteOrder.LITTLE_ENDIAN);
        while (slice.remaining() >= 4) {
          byte[] e = new byte[slice.getInt()];
          slice.get(e);
          elements.add(e);
        }
        return Tensor.ofByteStrings(name, shape, elements.toArray(new byte[0][]));
      }
      ByteBuffer copy = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
      copy.put(slice).flip();
      return Tensor.ofBinary(name, d, shape, copy);
    }

    void stop(Duration timeout) {
      if (process != null) {
        process.stop(timeout);
      }
    }
  }
}
