package dev.modelkeeper.server.oip.sharedmemory;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.request.SharedMemoryRef;
import java.io.IOException;

/**
 * Collects the shared memory parameters of one tensor's JSON {@code parameters} object as they are
 * parsed. Not thread-safe: one per tensor being read.
 */
public final class SharedMemoryParameters {

  private String region;
  private Long offset;
  private Long byteSize;
  private boolean any;

  /**
   * Reads parameter {@code key} when it is a shared memory one (the parser is at its value).
   *
   * @return whether it was one
   */
  public boolean read(String key, JsonParser p, String where) throws IOException {
    switch (key) {
      case SharedMemoryRef.REGION:
        if (p.currentToken() != JsonToken.VALUE_STRING) {
          throw new BadRequestException(where + " '" + key + "' must be a region name (string)");
        }
        region = p.getText();
        break;
      case SharedMemoryRef.OFFSET:
        offset = whole(p, key, where);
        break;
      case SharedMemoryRef.BYTE_SIZE:
        byteSize = whole(p, key, where);
        break;
      default:
        return false;
    }
    any = true;
    return true;
  }

  private static long whole(JsonParser p, String key, String where) throws IOException {
    if (p.currentToken() != JsonToken.VALUE_NUMBER_INT
        || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
        || p.getLongValue() < 0) {
      throw new BadRequestException(where + " '" + key + "' must be a non-negative integer");
    }
    return p.getLongValue();
  }

  /** Where the tensor lies, or null when none of the parameters was given. */
  public SharedMemoryRef ref(String where) {
    return any ? SharedMemoryRef.of(where, region, offset, byteSize) : null;
  }
}
