package dev.modelkeeper.server.sharedmemory;

import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.ServerException;

/**
 * A shared memory request the server refuses: a region it cannot map, a tensor past a region's end,
 * a registration from another machine, more mapped bytes than the bound. Immutable and thread-safe.
 */
public final class SharedMemoryException extends ServerException {
  private static final long serialVersionUID = 1L;

  SharedMemoryException(Failure.Kind kind, String message) {
    super(kind, message);
  }

  static SharedMemoryException bad(String message) {
    return new SharedMemoryException(Failure.Kind.BAD_REQUEST, message);
  }

  /** CUDA shared memory, asked of a server without a GPU. */
  public static SharedMemoryException cudaUnsupported() {
    return new SharedMemoryException(
        Failure.Kind.UNSUPPORTED,
        "CUDA shared memory is not supported: this server runs on the CPU; register system"
            + " shared memory instead");
  }
}
