package dev.modelkeeper.server.request;

import dev.modelkeeper.server.errors.BadRequestException;

/**
 * Where a tensor lies in a registered shared memory region, as Triton's shared memory extension
 * names it in a tensor's parameters: {@value #REGION}, {@value #OFFSET} and {@value #BYTE_SIZE}.
 * Immutable and thread-safe.
 *
 * @param region the name the region was registered under
 * @param offset where the tensor starts, in bytes from the registered region's start
 * @param byteSize how many bytes the tensor may take
 */
public record SharedMemoryRef(String region, long offset, long byteSize) {

  /** The parameter naming the region. */
  public static final String REGION = "shared_memory_region";

  /** The parameter giving the tensor's offset in the region (0 when absent). */
  public static final String OFFSET = "shared_memory_offset";

  /** The parameter giving the tensor's size in bytes. */
  public static final String BYTE_SIZE = "shared_memory_byte_size";

  /**
   * @throws BadRequestException when a value is missing or negative ({@code where} names the
   *     tensor)
   */
  public static SharedMemoryRef of(String where, String region, Long offset, Long byteSize) {
    if (region == null || region.isEmpty()) {
      throw new BadRequestException(where + " needs '" + REGION + "' naming a registered region");
    }
    if (byteSize == null || byteSize < 0) {
      throw new BadRequestException(
          where + " '" + BYTE_SIZE + "' must be a non-negative integer with '" + REGION + "'");
    }
    long o = offset == null ? 0 : offset;
    if (o < 0) {
      throw new BadRequestException(where + " '" + OFFSET + "' must be a non-negative integer");
    }
    return new SharedMemoryRef(region, o, byteSize);
  }
}
