package dev.modelkeeper.onnx;

import dev.modelkeeper.onnx.memory.MemoryCosts;
import dev.modelkeeper.onnx.memory.WorkingMemory;
import dev.modelkeeper.onnx.optimized.OptimizedModels;
import java.util.Objects;

/**
 * How {@link OnnxModel} configures its ONNX Runtime session. Immutable and thread-safe.
 *
 * <p>A model's {@code config.json} may override both thread counts ({@link
 * ModelConfig.Execution#intraOpThreads()}, {@link ModelConfig.Execution#interOpThreads()}).
 *
 * @param intraOpThreads threads one inference may use (≥ 1); 1 suits servers that run many requests
 *     at once
 * @param interOpThreads threads that run independent operators of one inference in parallel (≥ 1)
 * @param cpuArena whether sessions of models of at least 1 MiB allocate through ONNX Runtime's
 *     arena; the weights are kept outside it and the arena's free memory is returned after each
 *     run, so memory comes back (off, and always for smaller models: every tensor through the
 *     system allocator, which keeps freed blocks per thread)
 * @param trimNativeHeapOnClose whether closing a model of at least 1 MiB schedules the return of
 *     freed native memory to the operating system once unloads pause (without it glibc keeps a few
 *     hundred MB of freed memory under load/unload churn)
 * @param memoryCosts where measured model costs are kept (see {@link MemoryCosts})
 * @param workingMemory where a run reserves its working memory before it starts
 * @param optimizedModels where the pre-optimized forms of model files are kept and read ({@link
 *     OptimizedModels#NONE}: every load reads the model file as it is)
 */
public record OnnxModelOptions(
    int intraOpThreads,
    int interOpThreads,
    boolean cpuArena,
    boolean trimNativeHeapOnClose,
    MemoryCosts memoryCosts,
    WorkingMemory workingMemory,
    OptimizedModels optimizedModels) {

  public OnnxModelOptions {
    if (intraOpThreads < 1) {
      throw new IllegalArgumentException(
          "intraOpThreads must be at least 1, was " + intraOpThreads);
    }
    if (interOpThreads < 1) {
      throw new IllegalArgumentException(
          "interOpThreads must be at least 1, was " + interOpThreads);
    }
    Objects.requireNonNull(memoryCosts, "memoryCosts");
    Objects.requireNonNull(workingMemory, "workingMemory");
    Objects.requireNonNull(optimizedModels, "optimizedModels");
  }

  /** Options that keep no pre-optimized forms. */
  public OnnxModelOptions(
      int intraOpThreads,
      int interOpThreads,
      boolean cpuArena,
      boolean trimNativeHeapOnClose,
      MemoryCosts memoryCosts,
      WorkingMemory workingMemory) {
    this(
        intraOpThreads,
        interOpThreads,
        cpuArena,
        trimNativeHeapOnClose,
        memoryCosts,
        workingMemory,
        OptimizedModels.NONE);
  }

  /** Options whose measured costs are kept in memory only. */
  public OnnxModelOptions(
      int intraOpThreads, int interOpThreads, boolean cpuArena, boolean trimNativeHeapOnClose) {
    this(
        intraOpThreads,
        interOpThreads,
        cpuArena,
        trimNativeHeapOnClose,
        MemoryCosts.inMemory(),
        WorkingMemory.NONE);
  }

  /** Options with one inter-op thread. */
  public OnnxModelOptions(int intraOpThreads, boolean cpuArena, boolean trimNativeHeapOnClose) {
    this(intraOpThreads, 1, cpuArena, trimNativeHeapOnClose);
  }

  /** These options with the thread counts {@code execution} sets (the others kept). */
  public OnnxModelOptions overriddenBy(ModelConfig.Execution execution) {
    return new OnnxModelOptions(
        execution.intraOpThreads() > 0 ? execution.intraOpThreads() : intraOpThreads,
        execution.interOpThreads() > 0 ? execution.interOpThreads() : interOpThreads,
        cpuArena,
        trimNativeHeapOnClose,
        memoryCosts,
        workingMemory,
        optimizedModels);
  }

  /** These options with measured costs kept in {@code costs}. */
  public OnnxModelOptions withMemoryCosts(MemoryCosts costs) {
    return new OnnxModelOptions(
        intraOpThreads,
        interOpThreads,
        cpuArena,
        trimNativeHeapOnClose,
        costs,
        workingMemory,
        optimizedModels);
  }

  /** These options with runs reserving their working memory through {@code gate}. */
  public OnnxModelOptions withWorkingMemory(WorkingMemory gate) {
    return new OnnxModelOptions(
        intraOpThreads,
        interOpThreads,
        cpuArena,
        trimNativeHeapOnClose,
        memoryCosts,
        gate,
        optimizedModels);
  }

  /** These options with pre-optimized forms kept in and read from {@code forms}. */
  public OnnxModelOptions withOptimizedModels(OptimizedModels forms) {
    return new OnnxModelOptions(
        intraOpThreads,
        interOpThreads,
        cpuArena,
        trimNativeHeapOnClose,
        memoryCosts,
        workingMemory,
        forms);
  }

  /**
   * One intra-op thread, the arena on (weights outside it, shrunk after each run of a model of at
   * least 1 MiB), native heap trimmed on close, costs kept in memory.
   */
  public static OnnxModelOptions defaults() {
    return new OnnxModelOptions(1, true, true);
  }
}
