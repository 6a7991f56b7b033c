package dev.modelkeeper.testkit;

import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.memory.WorkingMemory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted repository and registry of {@link FakeModel}s: sizes, loads that pause at a gate or
 * fail, inferences that pause or fail, and a record of every model built. Thread-safe.
 */
public final class FakeModels implements ModelRegistry, ModelRepository {

  private final Map<String, Long> sizes = new ConcurrentHashMap<>();
  private final Map<String, Gate> loadGates = new ConcurrentHashMap<>();
  private final Map<String, Gate> inferGates = new ConcurrentHashMap<>();
  private final Map<String, RuntimeException> loadFailures = new ConcurrentHashMap<>();
  private final Map<String, RuntimeException> inferFailures = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> constructions = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<FakeModel> built = new ConcurrentLinkedQueue<>();
  private volatile WorkingMemory workingMemory = WorkingMemory.NONE;
  private volatile long workingBytes;

  /** Fake models with the given {@code name/version} identifiers, each 1000 bytes. */
  public static FakeModels of(String... ids) {
    FakeModels m = new FakeModels();
    for (String id : ids) {
      m.sizes.put(ModelId.parse(id).toString(), 1000L);
    }
    return m;
  }

  public FakeModels size(String id, long bytes) {
    sizes.put(id, bytes);
    return this;
  }

  /** The next load of {@code id} pauses at {@code gate}. */
  public FakeModels gateLoad(String id, Gate gate) {
    loadGates.put(id, gate);
    return this;
  }

  /** The next inference of {@code id} pauses at {@code gate}. */
  public FakeModels gateInfer(String id, Gate gate) {
    inferGates.put(id, gate);
    return this;
  }

  /**
   * Every later inference reserves {@code bytes} of working memory from {@code memory} once past
   * its gate (if any), as an ONNX model's run does, and holds it until the run ends.
   */
  public FakeModels working(WorkingMemory memory, long bytes) {
    this.workingMemory = memory;
    this.workingBytes = bytes;
    return this;
  }

  /** The next load of {@code id} throws {@code failure}. */
  public FakeModels failLoad(String id, RuntimeException failure) {
    loadFailures.put(id, failure);
    return this;
  }

  /** Every inference of {@code id} throws {@code failure} until cleared with null. */
  public FakeModels failInfer(String id, RuntimeException failure) {
    if (failure == null) {
      inferFailures.remove(id);
    } else {
      inferFailures.put(id, failure);
    }
    return this;
  }

  public int constructions(String id) {
    AtomicInteger n = constructions.get(id);
    return n == null ? 0 : n.get();
  }

  public List<FakeModel> built() {
    return new ArrayList<>(built);
  }

  /** Problems any built model saw (cleared while running an inference, run after clearing). */
  public List<String> violations() {
    List<String> out = new ArrayList<>();
    for (FakeModel m : built) {
      out.addAll(m.violations());
    }
    return out;
  }

  // ------------------------------------------------------------------------ registry

  @Override
  public ModelFactory getModel(String resolvedModelId, String apiKey) {
    locate(ModelId.parse(resolvedModelId));
    return new ModelFactory() {
      @Override
      public FakeModel create(String modelId, String key) {
        String id = locate(ModelId.parse(modelId)).id();
        constructions.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
        Gate gate = loadGates.remove(id);
        if (gate != null) {
          gate.pass();
        }
        RuntimeException failure = loadFailures.remove(id);
        if (failure != null) {
          throw failure;
        }
        ModelId mid = ModelId.parse(id);
        FakeModel m =
            new FakeModel(
                mid.name(),
                mid.version(),
                sizes.get(id),
                () -> inferGates.remove(id),
                () -> inferFailures.get(id),
                () -> workingMemory.reserve(id, workingBytes));
        built.add(m);
        return m;
      }

      @Override
      public long predictedSizeBytes(String modelId) {
        return sizes.getOrDefault(locate(ModelId.parse(modelId)).id(), -1L);
      }
    };
  }

  // ------------------------------------------------------------------------ repository

  @Override
  public List<RepositoryEntry> list() {
    List<RepositoryEntry> out = new ArrayList<>();
    sizes.forEach(
        (id, size) -> {
          ModelId m = ModelId.parse(id);
          out.add(new RepositoryEntry(m.name(), m.version(), "fake " + id, size));
        });
    out.sort(
        Comparator.comparing(RepositoryEntry::name)
            .thenComparingLong(e -> Long.parseLong(e.version())));
    return out;
  }

  @Override
  public RepositoryEntry locate(ModelId id) {
    RepositoryEntry best = null;
    for (RepositoryEntry e : list()) {
      if (e.name().equals(id.name()) && (id.isLatest() || e.version().equals(id.version()))) {
        best = e;
      }
    }
    if (best == null) {
      throw new ModelNotFoundException("no model '" + id + "' in the fake repository");
    }
    return best;
  }

  @Override
  public ModelArtifact fetch(ModelId id) {
    throw new UnsupportedOperationException("fake models have no files");
  }

  @Override
  public String location() {
    return "fake:" + sizes.keySet();
  }
}
