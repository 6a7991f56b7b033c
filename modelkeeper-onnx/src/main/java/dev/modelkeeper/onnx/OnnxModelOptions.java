package dev.modelkeeper.onnx;

/**
 * How {@link OnnxModel} configures its ONNX Runtime session. Immutable and thread-safe.
 *
 * @param intraOpThreads threads one inference may use (≥ 1); 1 suits servers that run many
 *     requests at once
 * @param cpuArena whether the session keeps an arena allocator (faster repeated inference, but
 *     memory is held until the session closes)
 * @param trimNativeHeapOnClose whether closing a model of at least 1 MiB schedules the return of
 *     freed native memory to the operating system once unloads pause (without it glibc keeps a
 *     few hundred MB of freed memory under load/unload churn)
 */
public record OnnxModelOptions(int intraOpThreads, boolean cpuArena, boolean trimNativeHeapOnClose) {

  public OnnxModelOptions {
    if (intraOpThreads < 1) {
      throw new IllegalArgumentException("intraOpThreads must be at least 1, was " + intraOpThreads);
    }
  }

  /** One intra-op thread, no arena, native heap trimmed on close. */
  public static OnnxModelOptions defaults() {
    return new OnnxModelOptions(1, false, true);
  }
}
