package dev.modelkeeper.onnx;

import ai.onnxruntime.MapInfo;
import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.SequenceInfo;
import ai.onnxruntime.TensorInfo;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.modelkeeper.core.ModelKeeperException;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotLoadedException;
import dev.modelkeeper.core.ModelTooLargeException;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.memory.MappedPages;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.onnx.memory.MemoryCosts;
import dev.modelkeeper.onnx.memory.MemoryMeter;
import dev.modelkeeper.onnx.memory.WorkingMemory;
import dev.modelkeeper.onnx.optimized.OptimizedModels;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * An ONNX model on ONNX Runtime. Thread-safe: any number of threads may call {@link #infer} at once
 * (they share one session); {@link #clearCache()} waits for running inferences, then closes the
 * session and releases its native memory, after which {@link #infer} throws {@link
 * ModelNotLoadedException}.
 *
 * <p>{@link #sizeBytes()} reports the process memory the loaded model keeps, and {@link
 * #workingBytes(int)} what one run takes on top: both measured (RSS sampled around the load and
 * around runs that had the process to themselves, see {@link MemoryMeter}) and kept in {@link
 * OnnxModelOptions#memoryCosts()}, or conservatively estimated from the file size until measured.
 */
public final class OnnxModel implements InferenceModel {

  private static final System.Logger LOG = System.getLogger(OnnxModel.class.getName());

  private static final long CLOSE_TIMEOUT_SECONDS = 60;

  /**
   * How long a load to be measured waits for a quiet window (the runs in progress to finish); past
   * it, the load is measured in company.
   */
  private static final long QUIET_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

  /** Runs probed for their working memory, at most, per loaded model. */
  private static final int MAX_RUN_PROBES = 32;

  private final ModelMetadata metadata;
  private final ModelConfig config;
  private final long fileBytes;
  private final long sizeBytes;
  private final MemoryCosts costs;

  /** What this model is known to cost: read on every run, so kept here, not looked up. */
  private volatile MemoryCost cost;

  private final WorkingMemory workingMemory;
  private final boolean batched;
  private final AtomicInteger runProbes = new AtomicInteger();
  private final Map<String, TensorSpec> inputSpecs;
  private final Map<String, TensorSpec> outputSpecs;

  /** The dims, without the batch dimension, of each tensor the config reshapes for the model. */
  private final Map<String, TensorConfig> reshapes;

  private final Set<String> optionalInputs;

  /** What the model file declares of its inputs beyond what the runtime reports. */
  private final GraphInputs graphInputs;

  private final boolean trimOnClose;
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  /** Read under the read lock, set to null under the write lock. */
  @GuardedBy("lock")
  private OrtSession session;

  @GuardedBy("lock")
  private OrtSession.SessionOptions sessionOptions;

  /** How each run goes: its log level, and for arena models the arena's shrinkage. */
  @GuardedBy("lock")
  private OrtSession.RunOptions runOptions;

  private OnnxModel(
      ModelMetadata metadata,
      ModelConfig config,
      long fileBytes,
      MemoryCost cost,
      MemoryCosts costs,
      WorkingMemory workingMemory,
      OrtSession session,
      OrtSession.SessionOptions sessionOptions,
      OrtSession.RunOptions runOptions,
      boolean trimOnClose,
      GraphInputs graphInputs) {
    this.metadata = metadata;
    this.graphInputs = graphInputs;
    this.config = config;
    this.trimOnClose = trimOnClose;
    this.fileBytes = fileBytes;
    this.sizeBytes = cost.idleBytes();
    this.costs = costs;
    this.cost = cost;
    this.workingMemory = workingMemory;
    this.session = session;
    this.sessionOptions = sessionOptions;
    this.runOptions = runOptions;
    this.inputSpecs = index(metadata.inputs());
    this.outputSpecs = index(metadata.outputs());
    this.reshapes = reshapes(config);
    this.optionalInputs = new HashSet<>();
    for (TensorConfig c : config.declared().inputs()) {
      if (c.optional()) {
        optionalInputs.add(c.name());
      }
    }
    this.batched =
        config.maxBatchSize() != 0
            && !metadata.inputs().isEmpty()
            && metadata.inputs().stream()
                .allMatch(t -> !t.shape().isEmpty() && t.shape().get(0) < 0);
  }

  /** Loads a repository artifact. */
  public static OnnxModel load(ModelArtifact artifact, OnnxModelOptions options) {
    return load(
        artifact.modelFile(), artifact.name(), artifact.version(), artifact.config(), options);
  }

  /**
   * Loads {@code modelFile} into a new session.
   *
   * @throws ModelLoadException when the file cannot be read, is not a valid ONNX model, or uses a
   *     tensor type ModelKeeper does not support
   */
  public static OnnxModel load(
      Path modelFile, String name, String version, ModelConfig config, OnnxModelOptions options) {
    String id = name + "/" + version;
    long size;
    try {
      size = Files.size(modelFile);
    } catch (IOException e) {
      throw new ModelLoadException("cannot read model file of '" + id + "': " + modelFile, e);
    }
    OnnxRuntimeState.ensureStarted(); // ONNX Runtime's own first-session state is not this model's
    OrtEnvironment env = OnnxRuntimeState.environment();
    OrtSession.SessionOptions opts = null;
    OrtSession.RunOptions runOpts = null;
    OrtSession session = null;
    MemoryMeter.Probe probe = null;
    MemoryMeter.Quiet quiet = null;
    try {
      OnnxModelOptions threads = options.overriddenBy(config.execution());
      // models of MemoryCost.SMALL_MODEL_BYTES or more allocate through ONNX Runtime's arena and
      // give its free memory back after each run (see SessionSettings). Only models that large
      // trim the native heap around their load and after their close: a smaller one's memory is
      // a few dozen pages, not worth a trim's walk over the heap
      boolean small = size < MemoryCost.SMALL_MODEL_BYTES;
      boolean arena = options.cpuArena() && !small;
      SessionSettings settings =
          new SessionSettings(threads.intraOpThreads(), threads.interOpThreads(), arena);
      // what ONNX Runtime says while a model runs repeats with every request (a shape warning, a
      // kernel refusing the inputs it was given, which the client is answered): silenced; what it
      // says while the model loads is logged once, at its level
      runOpts = new OrtSession.RunOptions();
      runOpts.setLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_FATAL);
      if (arena) {
        runOpts.addRunConfigEntry("memory.enable_memory_arena_shrinkage", "cpu:0");
      }
      OptimizedModels.Load source =
          options
              .optimizedModels()
              .prepare(
                  modelFile,
                  settings.describe(),
                  (file, configure) -> writeForm(file, configure, settings, id, size, options));
      boolean trim = options.trimNativeHeapOnClose() && !small;
      // a model whose load was never measured alone is measured in a quiet window: the process
      // is hardly ever alone under churn, and the estimate it is charged meanwhile is a model's
      // worth too high. Once per model: the figure is kept (see MemoryMeter)
      if (!small
          && !options.memoryCosts().known(id).map(MemoryCost::measured).orElse(false)
          && options.workingMemory().modelRoom() != Long.MAX_VALUE) {
        quiet = MemoryMeter.quiet(QUIET_WAIT_NANOS);
      }
      // the native heap is trimmed on either side of the load, on its path: memory others freed
      // goes back first (it is not this model's), and what the load parsed and freed goes back
      // before the load is read. Measured at under a millisecond each, they keep about a model
      // file's worth of freed parse buffers per load off the process's RSS
      if (trim) {
        NativeHeap.trim();
      }
      probe = MemoryMeter.startLoad();
      opts = settings.create(id);
      try {
        source.configure(opts);
        String file = source.file().toString();
        OrtSession.SessionOptions given = opts;
        session = LoadThreads.createSession(id, settings, () -> env.createSession(file, given));
      } catch (OrtException | RuntimeException e) {
        if (source.kind() == OptimizedModels.Load.Kind.PLAIN) {
          throw e;
        }
        // a form that cannot be read: the model file itself
        source.failed(e);
        source = options.optimizedModels().plain(modelFile);
        opts.close();
        opts = settings.create(id);
        OrtSession.SessionOptions given = opts;
        session =
            LoadThreads.createSession(
                id, settings, () -> env.createSession(modelFile.toString(), given));
      }
      // initializers used in place from a mapped file count as the model's now, not at its
      // first run
      for (Path mapped : source.mappedFiles()) {
        MappedPages.populate(mapped);
      }
      if (trim) {
        // what the load parsed and freed goes back now: the model is charged what it keeps
        probe.trimHere(NativeHeap::trim);
      }
      MemoryMeter.Reading reading = probe.end();
      probe = null;
      if (quiet != null) {
        quiet.close();
      }
      long floor =
          MemoryCost.floorBytes(size, (int) (session.getNumInputs() + session.getNumOutputs()));
      long room = options.workingMemory().modelRoom();
      MemoryCost cost = charge(options.memoryCosts(), id, size, floor, reading, room);
      refuseWhenItCannotFit(id, cost, room);
      GraphInputs graphInputs = graphInputs(modelFile);
      Map<String, NodeInfo> inputInfo;
      Map<String, NodeInfo> outputInfo;
      try {
        inputInfo = session.getInputInfo();
        outputInfo = session.getOutputInfo();
      } catch (OrtException e) { // ONNX optionals: the Java API has no type to describe them
        throw cannotServe(
            id,
            "an input or output is not a tensor (ONNX Runtime's Java API cannot describe it: "
                + e.getMessage()
                + "); ModelKeeper serves models whose inputs and outputs are all tensors");
      }
      ModelMetadata metadata =
          new ModelMetadata(
              name,
              version,
              ModelMetadata.ONNX_PLATFORM,
              served(config, "input", specs(id, "input", inputInfo, graphInputs)),
              served(config, "output", specs(id, "output", outputInfo, graphInputs)),
              config.description(),
              config.labels());
      OnnxModel model =
          new OnnxModel(
              metadata,
              config,
              size,
              cost,
              options.memoryCosts(),
              options.workingMemory(),
              session,
              opts,
              runOpts,
              options.trimNativeHeapOnClose(),
              graphInputs);
      WarmUp.run(model, config); // ready only once its warm-up ran, as in Triton
      return model;
    } catch (OrtException | RuntimeException e) {
      if (probe != null) {
        probe.end();
      }
      if (quiet != null) {
        quiet.close();
      }
      closeQuietly(session, opts);
      if (runOpts != null) {
        runOpts.close();
      }
      if (e instanceof ModelTooLargeException && options.trimNativeHeapOnClose()) {
        NativeHeap.trim(); // what it took goes back to the system before it is answered
      }
      if (e instanceof ModelKeeperException) {
        throw (ModelKeeperException) e;
      }
      String message =
          "ONNX Runtime cannot load '" + id + "' from " + modelFile + ": " + e.getMessage();
      if (e instanceof OrtException && fromTheFile(((OrtException) e).getCode())) {
        throw new ModelUnservableException(message, e, false);
      }
      throw new ModelLoadException(message, e);
    }
  }

  /**
   * Writes the pre-optimized form of {@code modelFile} with a session of its own, closed at once,
   * on the builder's thread. Saving the form makes ONNX Runtime hold the weights twice, so the
   * session first reserves twice the load peak known (or estimated) for the model as working
   * memory, only if the budget has that room now: a form never evicts a model, and waits for a
   * quieter moment instead (returns false). It counts as a load for the memory meter, so that what
   * is measured meanwhile is not taken for another model's.
   */
  private static boolean writeForm(
      Path modelFile,
      OptimizedModels.Configure configure,
      SessionSettings settings,
      String id,
      long fileBytes,
      OnnxModelOptions options)
      throws OrtException {
    long bytes = 2 * options.memoryCosts().costOf(id, fileBytes).loadPeakBytes();
    Optional<WithFixedSizeCache.Reservation> reserved =
        options.workingMemory().tryReserve(id, bytes);
    if (reserved.isEmpty()) {
      return false;
    }
    try (WithFixedSizeCache.Reservation room = reserved.get();
        OrtSession.SessionOptions build = settings.create(id + " (pre-optimizing)")) {
      configure.accept(build);
      MemoryMeter.Probe counted = MemoryMeter.startLoad();
      try {
        LoadThreads.createSession(
                id,
                settings,
                () -> OnnxRuntimeState.environment().createSession(modelFile.toString(), build))
            .close();
      } finally {
        counted.end();
        if (options.trimNativeHeapOnClose()) {
          NativeHeap.requestTrim();
        }
      }
    }
    return true;
  }

  /**
   * Whether ONNX Runtime failed to create a session for a reason in the model file (it cannot be
   * parsed, its graph is invalid, it uses an operator or type the runtime lacks), which the same
   * file will give again; not for the runtime's own trouble (out of memory, an engine error).
   */
  private static boolean fromTheFile(OrtException.OrtErrorCode code) {
    switch (code) {
      case ORT_FAIL:
      case ORT_INVALID_ARGUMENT:
      case ORT_NO_SUCHFILE:
      case ORT_NO_MODEL:
      case ORT_INVALID_PROTOBUF:
      case ORT_NOT_IMPLEMENTED:
      case ORT_INVALID_GRAPH:
        return true;
      default:
        return false;
    }
  }

  /** What the model file declares of its inputs beyond the runtime's report; none if unreadable. */
  private static GraphInputs graphInputs(Path modelFile) {
    try {
      return GraphInputs.read(modelFile);
    } catch (IOException | RuntimeException e) {
      // the runtime read the file; what it reports is all that is known of the inputs then
      LOG.log(Level.DEBUG, "cannot read the inputs of {0}: {1}", modelFile, e.getMessage());
      return GraphInputs.NONE;
    }
  }

  /** The tensors served: the model file's, or those the config declares once they fit it. */
  private static List<TensorSpec> served(ModelConfig config, String what, List<TensorSpec> actual) {
    ModelConfig.Declared d = config.declared();
    try {
      return d.served(
          what, what.equals("input") ? d.inputs() : d.outputs(), actual, config.maxBatchSize());
    } catch (IllegalArgumentException e) {
      throw new ModelUnservableException(
          "the configuration contradicts the model file: " + e.getMessage(), e, false);
    }
  }

  /**
   * Refuses a model that, loaded and running one row, needs more than {@code room}, the most the
   * memory cap leaves for models: it could never be served under the cap. Its cost is recorded, so
   * later requests are refused before it is loaded again (until its file or the cap changes).
   */
  private static void refuseWhenItCannotFit(String id, MemoryCost cost, long room) {
    long needs = Math.max(cost.loadPeakBytes(), cost.idleBytes() + cost.workingBytesFor(1));
    if (needs <= room) {
      return;
    }
    String message =
        String.format(
            Locale.ROOT,
            "model '%s' needs %.1f MiB of memory at its peak (%s as it loaded), more than the %.1f"
                + " MiB the memory cap leaves for models: it is not loaded again until its file or"
                + " the cap changes (--max-memory)",
            id,
            needs / 1048576.0,
            cost.measured() ? "measured" : "estimated",
            room / 1048576.0);
    LOG.log(Level.WARNING, message);
    throw new ModelTooLargeException(message);
  }

  /**
   * The cost to charge for a model just loaded. A clean reading is recorded as its measured cost. A
   * reading taken beside unloads, trims and runs but no other load bounds the load from below (what
   * other runs reserved taken off): when that bound alone is more than {@code room}, all the memory
   * the cap leaves for models, it is recorded at once (the load crossed the cap, and the model is
   * refused); otherwise it only raises this load's charge, unrecorded (the process's own heap and
   * request buffers may have grown meanwhile). A reading beside another load says nothing of this
   * one: the known (or estimated) cost stands. Each figure is at least {@code floorBytes}.
   */
  private static MemoryCost charge(
      MemoryCosts costs,
      String id,
      long fileBytes,
      long floorBytes,
      MemoryMeter.Reading reading,
      long room) {
    if (reading.clean()) {
      return costs.recordLoad(id, fileBytes, floorBytes, reading.peakDelta(), reading.afterDelta());
    }
    if (reading.peakLowerBound() > room) {
      return costs.recordLoad(
          id, fileBytes, floorBytes, reading.peakLowerBound(), reading.afterLowerBound());
    }
    MemoryCost known = costs.costOf(id, fileBytes);
    long idle = Math.max(known.idleBytes(), Math.max(reading.afterLowerBound(), floorBytes));
    long peak = Math.max(Math.max(known.loadPeakBytes(), reading.peakLowerBound()), idle);
    if (idle == known.idleBytes() && peak == known.loadPeakBytes()) {
      return known;
    }
    return new MemoryCost(
        fileBytes,
        peak,
        idle,
        known.workingBytes(),
        known.workingRows(),
        known.measured(),
        known.runMeasured());
  }

  @Override
  public ModelMetadata metadata() {
    return metadata;
  }

  @Override
  public ModelConfig config() {
    return config;
  }

  /**
   * The process memory this model keeps while loaded, as charged when it loaded: measured, or the
   * conservative estimate from its file size.
   */
  @Override
  public long sizeBytes() {
    return sizeBytes;
  }

  /** The size of the model file in bytes. */
  public long fileBytes() {
    return fileBytes;
  }

  /** The working memory one run of {@code rows} rows takes on top of {@link #sizeBytes()}. */
  @Override
  public long workingBytes(int rows) {
    return cost.workingBytesFor(Math.max(1, rows));
  }

  /** What this model is known to cost now (measured figures as they are learned). */
  public MemoryCost memoryCost() {
    return cost;
  }

  @Override
  public Map<String, Tensor> infer(Map<String, Tensor> inputs, Set<String> requestedOutputs) {
    return infer(inputs, requestedOutputs, null);
  }

  @Override
  public Map<String, Tensor> infer(
      Map<String, Tensor> inputs, Set<String> requestedOutputs, RunPhases phases) {
    validateInputs(inputs);
    List<String> outputs = outputNames(requestedOutputs);
    OrtEnvironment env = OnnxRuntimeState.environment();
    Map<String, OnnxTensor> ortInputs = new LinkedHashMap<>();
    ReentrantReadWriteLock.ReadLock read = lock.readLock();
    read.lock();
    try {
      OrtSession s = session;
      if (s == null) {
        throw new ModelNotLoadedException("model '" + metadata.id() + "' was unloaded");
      }
      for (Tensor t : inputs.values()) {
        TensorConfig r = reshapes.get(t.name());
        long[] shape = r == null ? t.shape() : reshaped(t.shape(), r.reshape());
        ortInputs.put(t.name(), t.datatype().toOrt(env, t, shape));
      }
      if (phases != null) {
        phases.inputsReady();
      }
      int rows = rows(inputs);
      long bytes = workingBytes(rows);
      try (WithFixedSizeCache.Reservation working = workingMemory.reserve(metadata.id(), bytes);
          MemoryMeter.Held counted = MemoryMeter.working(bytes)) {
        return measuredRun(s, ortInputs, outputs, rows, phases);
      }
    } catch (OrtException e) {
      if (e.getCode() == OrtException.OrtErrorCode.ORT_FAIL
          || e.getCode() == OrtException.OrtErrorCode.ORT_INVALID_ARGUMENT) {
        // a kernel refused these inputs (dimensions that do not agree, say): the same request
        // fails the same way, so it is the request's answer, not the server's fault
        throw new InvalidInputException(
            "ONNX Runtime cannot run '" + metadata.id() + "' on these inputs: " + e.getMessage());
      }
      throw new InferenceException(
          "ONNX Runtime failed to run '" + metadata.id() + "': " + e.getMessage(), e);
    } finally {
      read.unlock();
      for (OnnxTensor t : ortInputs.values()) {
        t.close();
      }
    }
  }

  /** Runs the session, probing the run's memory when it is still to be learned. */
  @GuardedBy("lock")
  private Map<String, Tensor> measuredRun(
      OrtSession s,
      Map<String, OnnxTensor> ortInputs,
      List<String> outputs,
      int rows,
      RunPhases phases)
      throws OrtException {
    MemoryMeter.Probe probe = probeRun(rows);
    if (probe == null) {
      MemoryMeter.runStarted();
    }
    try {
      return run(s, ortInputs, outputs, phases);
    } finally {
      if (probe == null) {
        MemoryMeter.runEnded();
      } else {
        MemoryMeter.Reading r = probe.end();
        if (r.clean()) {
          cost = costs.recordRun(metadata.id(), fileBytes, rows, r.peakDelta());
        }
      }
    }
  }

  @GuardedBy("lock")
  private Map<String, Tensor> run(
      OrtSession s, Map<String, OnnxTensor> ortInputs, List<String> outputs, RunPhases phases)
      throws OrtException {
    Set<String> names = new LinkedHashSet<>(outputs);
    try (OrtSession.Result result =
        runOptions == null ? s.run(ortInputs, names) : s.run(ortInputs, names, runOptions)) {
      if (phases != null) {
        phases.runEnded();
      }
      Map<String, Tensor> out = new LinkedHashMap<>();
      for (String name : outputs) {
        OnnxValue v =
            result.get(name).orElseThrow(() -> new IllegalStateException("no output " + name));
        Tensor t = fromOrt(name, v);
        TensorConfig r = reshapes.get(name);
        out.put(
            name,
            r == null ? t : Tensor.of(name, t.datatype(), reshaped(t.shape(), r.dims()), t.data()));
      }
      return out;
    }
  }

  private static Map<String, TensorConfig> reshapes(ModelConfig config) {
    Map<String, TensorConfig> out = new HashMap<>();
    for (TensorConfig c : config.declared().inputs()) {
      if (c.hasReshape()) {
        out.put(c.name(), c);
      }
    }
    for (TensorConfig c : config.declared().outputs()) {
      if (c.hasReshape()) {
        out.put(c.name(), c);
      }
    }
    return out;
  }

  /**
   * {@code shape} as {@code dims}, keeping the batch dimension of a batched model; a -1 in {@code
   * dims} takes what the elements leave for it.
   */
  private long[] reshaped(long[] shape, List<Long> dims) {
    int lead = batched ? 1 : 0;
    long[] out = new long[lead + dims.size()];
    long elements = 1;
    for (long d : shape) {
      elements *= d;
    }
    long known = 1;
    int any = -1;
    if (lead == 1) {
      out[0] = shape.length == 0 ? 1 : shape[0];
      known = out[0];
    }
    for (int i = 0; i < dims.size(); i++) {
      out[lead + i] = dims.get(i);
      if (dims.get(i) < 0) {
        any = lead + i;
      } else {
        known *= dims.get(i);
      }
    }
    if (any >= 0) {
      out[any] = known == 0 ? 0 : elements / known;
    }
    return out;
  }

  /**
   * The rows of a batched request (its first dimension), else 1; a scalar, which an input that
   * declares no shape takes, is one row.
   */
  private int rows(Map<String, Tensor> inputs) {
    if (!batched) {
      return 1;
    }
    long[] shape = inputs.values().iterator().next().shape();
    return shape.length == 0 ? 1 : (int) Math.max(1, Math.min(Integer.MAX_VALUE, shape[0]));
  }

  /**
   * A probe around this run when it may teach the working memory (at least the batch measured so
   * far: one run's reading can miss what later runs of the same batch take as the arena settles)
   * and the process is otherwise quiet; the first {@link #MAX_RUN_PROBES} such runs per load.
   */
  private MemoryMeter.Probe probeRun(int rows) {
    MemoryCost c = cost;
    if (c.runMeasured() && rows < c.workingRows()) {
      return null; // a smaller batch than measured teaches nothing
    }
    if (runProbes.get() >= MAX_RUN_PROBES) {
      return null;
    }
    MemoryMeter.Probe p = MemoryMeter.startRunIfAlone();
    if (p != null) {
      runProbes.incrementAndGet();
    }
    return p;
  }

  /**
   * Closes the session and releases its native memory, after running inferences finish (waits at
   * most 60 s); then, when {@link OnnxModelOptions#trimNativeHeapOnClose()} is set and the model
   * has at least 1 MiB, schedules the return of the freed pages to the operating system once
   * unloads pause (about 200 ms later, at most 5 s). Idempotent.
   *
   * @throws TimeoutException when inferences keep the model busy past the wait
   * @throws InterruptedException when interrupted while waiting
   */
  @Override
  public void clearCache() throws Exception {
    ReentrantReadWriteLock.WriteLock write = lock.writeLock();
    if (!write.tryLock(CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      throw new TimeoutException(
          "model '"
              + metadata.id()
              + "' still ran inferences after "
              + CLOSE_TIMEOUT_SECONDS
              + "s");
    }
    boolean closed = false;
    try {
      OrtSession s = session;
      OrtSession.SessionOptions o = sessionOptions;
      OrtSession.RunOptions r = runOptions;
      session = null;
      sessionOptions = null;
      runOptions = null;
      if (s != null) {
        closed = true;
        MemoryMeter.unloadStarted();
        try {
          s.close();
        } finally {
          MemoryMeter.unloadEnded();
          o.close();
          if (r != null) {
            r.close();
          }
        }
      }
    } finally {
      write.unlock();
    }
    if (closed && trimOnClose && fileBytes >= MemoryCost.SMALL_MODEL_BYTES) {
      NativeHeap.requestTrim();
    }
  }

  /** True until {@link #clearCache()} has closed the session. */
  public boolean isLoaded() {
    ReentrantReadWriteLock.ReadLock read = lock.readLock();
    read.lock();
    try {
      return session != null;
    } finally {
      read.unlock();
    }
  }

  @Override
  public String toString() {
    return "OnnxModel[" + metadata.id() + ", " + fileBytes + " bytes in its file]";
  }

  // ---- validation -------------------------------------------------------------------------

  private void validateInputs(Map<String, Tensor> inputs) {
    if (inputs == null) {
      throw new InvalidInputException("no inputs given to model '" + metadata.id() + "'");
    }
    for (Map.Entry<String, Tensor> e : inputs.entrySet()) {
      String key = e.getKey();
      Tensor t = e.getValue();
      if (t == null) {
        throw new InvalidInputException("input '" + key + "' has no tensor");
      }
      if (!t.name().equals(key)) {
        throw new InvalidInputException(
            "input keyed '" + key + "' carries a tensor named '" + t.name() + "'");
      }
      TensorSpec spec = inputSpecs.get(key);
      if (spec == null && graphInputs.withDefaults().contains(key)) {
        throw new InvalidInputException(
            "input '"
                + key
                + "' of model '"
                + metadata.id()
                + "' has a default value in the model (an initializer of that name), which ONNX"
                + " Runtime's Java API does not let a request replace; leave it out to use the"
                + " default");
      }
      if (spec == null) {
        throw new InvalidInputException(
            "model '"
                + metadata.id()
                + "' has no input named '"
                + key
                + "'; its inputs are "
                + inputSpecs.keySet());
      }
      spec.checkDatatype(metadata.id(), t);
      if (!graphInputs.shapeless().contains(key)) {
        spec.checkShape(metadata.id(), t.shape());
      }
    }
    for (String name : inputSpecs.keySet()) {
      if (!inputs.containsKey(name) && !optionalInputs.contains(name)) {
        throw new InvalidInputException(
            "model '" + metadata.id() + "' needs input '" + name + "', which is missing");
      }
    }
    int limit = config.execution().maxBatchSize();
    // config.json's max_batch_size 1 only turns batching off; Triton's also limits each request
    boolean limits = limit > 1 || (limit == 1 && config.declared().triton() != null);
    if (batched && limits && !inputs.isEmpty() && rows(inputs) > limit) {
      throw new InvalidInputException(
          "a batch of "
              + rows(inputs)
              + " rows is more than model '"
              + metadata.id()
              + "' takes: its configuration"
              + (config.declared().file().isEmpty() ? "" : " (" + config.declared().file() + ")")
              + " sets max_batch_size "
              + limit
              + "; send at most "
              + limit
              + " rows per request");
    }
  }

  private List<String> outputNames(Set<String> requested) {
    if (requested == null || requested.isEmpty()) {
      return new ArrayList<>(outputSpecs.keySet());
    }
    List<String> names = new ArrayList<>();
    for (String name : outputSpecs.keySet()) {
      if (requested.contains(name)) {
        names.add(name);
      }
    }
    for (String name : requested) {
      if (!outputSpecs.containsKey(name)) {
        throw new InvalidInputException(
            "model '"
                + metadata.id()
                + "' has no output named '"
                + name
                + "'; its outputs are "
                + outputSpecs.keySet());
      }
    }
    return names;
  }

  // ---- conversion -------------------------------------------------------------------------

  private Tensor fromOrt(String name, OnnxValue value) throws OrtException {
    if (!(value instanceof OnnxTensor)) {
      throw new InferenceException(
          "output '"
              + name
              + "' of '"
              + metadata.id()
              + "' is a "
              + value.getType()
              + ", only tensors are supported",
          null);
    }
    OnnxTensor t = (OnnxTensor) value;
    TensorInfo info = t.getInfo();
    Datatype dt = Datatype.ofOrt(info.onnxType);
    if (dt == null) {
      throw new InferenceException(
          "output '" + name + "' of '" + metadata.id() + "' has unsupported type " + info.type,
          null);
    }
    return Tensor.of(name, dt, info.getShape(), dt.fromOrt(t));
  }

  /**
   * The tensors of a model's inputs or outputs ({@code what}).
   *
   * @throws ModelUnservableException when one is not a tensor (an ONNX sequence, map or optional),
   *     has an element type the protocol cannot name, or is an input of a type that ONNX Runtime's
   *     Java API cannot create
   */
  private static List<TensorSpec> specs(
      String id, String what, Map<String, NodeInfo> infos, GraphInputs graphInputs) {
    List<TensorSpec> out = new ArrayList<>();
    for (NodeInfo node : infos.values()) {
      if (!(node.getInfo() instanceof TensorInfo)) {
        throw cannotServe(
            id,
            what
                + " '"
                + node.getName()
                + "' is "
                + kind(node.getInfo())
                + ", not a tensor; ModelKeeper serves models whose inputs and outputs are all"
                + " tensors");
      }
      TensorInfo info = (TensorInfo) node.getInfo();
      Datatype dt = Datatype.ofOrt(info.onnxType);
      if (dt == null) {
        throw cannotServe(
            id,
            what
                + " '"
                + node.getName()
                + "' has element type "
                + info.onnxType.name().replace("ONNX_TENSOR_ELEMENT_DATA_TYPE_", "")
                + ", which the Open Inference Protocol cannot carry");
      }
      if (what.equals("input") && !dt.javaApiCreates()) {
        throw cannotServe(
            id,
            "input '"
                + node.getName()
                + "' is "
                + dt
                + ", which ONNX Runtime's Java API cannot create (it reads "
                + dt
                + " outputs, but has no way to pass "
                + dt
                + " inputs)");
      }
      // an input that declares no shape takes any shape; the runtime reports it like a scalar
      boolean anyShape = what.equals("input") && graphInputs.shapeless().contains(node.getName());
      out.add(TensorSpec.of(node.getName(), dt, anyShape ? new long[] {-1} : info.getShape()));
    }
    return out;
  }

  private static ModelUnservableException cannotServe(String id, String why) {
    return new ModelUnservableException("model '" + id + "' cannot be served: " + why, null, true);
  }

  /** What a non-tensor value is, in ONNX's words. */
  private static String kind(Object info) {
    if (info instanceof SequenceInfo) {
      return "a sequence";
    }
    if (info instanceof MapInfo) {
      return "a map";
    }
    return "an optional or other non-tensor value";
  }

  private static Map<String, TensorSpec> index(List<TensorSpec> specs) {
    Map<String, TensorSpec> m = new LinkedHashMap<>();
    for (TensorSpec s : specs) {
      m.put(s.name(), s);
    }
    return m;
  }

  private static void closeQuietly(OrtSession session, OrtSession.SessionOptions opts) {
    try {
      if (session != null) {
        session.close();
      }
    } catch (OrtException | RuntimeException ignored) {
      // already failing; the original error is reported
    } finally {
      if (opts != null) {
        opts.close();
      }
    }
  }
}
