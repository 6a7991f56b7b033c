package dev.modelkeeper.server.config;

import io.soabase.recordbuilder.core.RecordBuilder;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * How much the server holds at once.
 *
 * @param maxModels the most models resident or loading at once
 * @param maxBytes the most bytes of models resident or loading at once; 0 means no byte budget
 * @param maxMemory the cap on the process's resident memory, heap included; 0 means a share of the
 *     container's memory limit or of the machine's memory
 * @param memoryCostsFile where measured model memory costs are kept across restarts; null keeps
 *     them in memory
 * @param maxRequestBytes the largest request body accepted; larger ones are answered 413
 * @param maxInflightBytes the most bytes of request bodies and decoded tensors in flight at once,
 *     server-wide; 0 means a quarter of the maximum heap ({@link #inflightBytes()})
 * @param maxSharedMemoryBytes the most bytes of system shared memory regions mapped at once, all
 *     clients' registrations together
 */
@RecordBuilder
public record Budgets(
    int maxModels,
    long maxBytes,
    long maxMemory,
    @Nullable Path memoryCostsFile,
    long maxRequestBytes,
    long maxInflightBytes,
    long maxSharedMemoryBytes)
    implements BudgetsBuilder.With {

  public static final Budgets DEFAULTS = new Budgets(8, 0, 0, null, 32L << 20, 0, 1L << 30);

  /** Budgets with the default bound on mapped shared memory. */
  public Budgets(
      int maxModels,
      long maxBytes,
      long maxMemory,
      @Nullable Path memoryCostsFile,
      long maxRequestBytes,
      long maxInflightBytes) {
    this(
        maxModels,
        maxBytes,
        maxMemory,
        memoryCostsFile,
        maxRequestBytes,
        maxInflightBytes,
        DEFAULTS.maxSharedMemoryBytes());
  }

  public Budgets {
    Check.atLeast("max-models", maxModels, 1);
    Check.atLeast("max-bytes", maxBytes, 0);
    Check.atLeast("max-memory", maxMemory, 0);
    Check.atLeast("max-request-bytes", maxRequestBytes, 1024);
    Check.atLeast("max-inflight-bytes", maxInflightBytes, 0);
    Check.atLeast("max-shared-memory-bytes", maxSharedMemoryBytes, 0);
    if (maxInflightBytes > 0 && maxInflightBytes < maxRequestBytes) {
      String reason = "must hold one request of max-request-bytes=" + maxRequestBytes;
      throw new InvalidConfigException("max-inflight-bytes", reason + ", was " + maxInflightBytes);
    }
  }

  /** The in-flight budget the server applies: {@link #maxInflightBytes()}, or its default for 0. */
  public long inflightBytes() {
    return maxInflightBytes > 0 ? maxInflightBytes : Runtime.getRuntime().maxMemory() / 4;
  }
}
