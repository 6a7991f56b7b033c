package dev.modelkeeper.onnx.writer;

import java.io.IOException;

/**
 * The content of a length-delimited protobuf field (an embedded message, a string, bytes or a
 * packed list), whose length is known before it is written, so the field can be streamed without
 * being encoded into a buffer first. Implementations in this package are not thread-safe.
 */
interface FieldBody {

  /** The number of bytes {@link #writeTo} writes. */
  long length();

  /** Writes exactly {@link #length()} bytes. */
  void writeTo(ProtoWriter out) throws IOException;
}
