package dev.modelkeeper.onnx;

/**
 * How {@link OnnxModel} configures its ONNX Runtime session. Immutable and thread-safe.
 *
 * <p>A model's {@code config.json} may override both thread counts ({@link
 * ModelConfig.Execution#intraOpThreads()}, {@link ModelConfig.Execution#interOpThreads()}).
 *
 * @param intraOpThreads threads one inference may use (≥ 1); 1 suits servers that run many requests
 *     at once
 * @param interOpThreads threads that run independent operators of one inference in parallel (≥ 1)
 * @param cpuArena whether the session keeps an arena allocator (faster repeated inference, but
 *     memory is held until the session closes)
 * @param trimNativeHeapOnClose whether closing a model of at least 1 MiB schedules the return of
 *     freed native memory to the operating system once unloads pause (without it glibc keeps a few
 *     hundred MB of freed memory under load/unload churn)
 */
public record OnnxModelOptions(
    int intraOpThreads, int interOpThreads, boolean cpuArena, boolean trimNativeHeapOnClose) {

  public OnnxModelOptions {
    if (intraOpThreads < 1) {
      throw new IllegalArgumentException(
          "intraOpThreads must be at least 1, was " + intraOpThreads);
    }
    if (interOpThreads < 1) {
      throw new IllegalArgumentException(
          "interOpThreads must be at least 1, was " + interOpThreads);
    }
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
        trimNativeHeapOnClose);
  }

  /** One intra-op thread, no arena, native heap trimmed on close. */
  public static OnnxModelOptions defaults() {
    return new OnnxModelOptions(1, false, true);
  }
}
