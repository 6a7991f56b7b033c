package dev.modelkeeper.onnx.writer;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes Protocol Buffers wire-format primitives (tags, varints, fixed32 values, raw bytes)
 * straight to an output stream and counts the bytes written. It buffers nothing itself, so give it
 * a buffered stream. Not thread-safe: one instance writes one stream from one thread.
 */
final class ProtoWriter {

  static final int VARINT = 0;
  static final int LENGTH_DELIMITED = 2;
  static final int FIXED32 = 5;

  private static final int MAX_VARINT_BYTES = 10;

  private final OutputStream out;
  private final byte[] scratch = new byte[MAX_VARINT_BYTES];
  private long written;

  ProtoWriter(OutputStream out) {
    this.out = out;
  }

  /** The encoded size of a field's tag. */
  static int tagSize(int field) {
    return varintSize((long) field << 3);
  }

  /** The encoded size of a varint; negative values take ten bytes, as protobuf writes them. */
  static int varintSize(long value) {
    int size = 1;
    for (long v = value; (v & ~0x7FL) != 0; v >>>= 7) {
      size++;
    }
    return size;
  }

  void tag(int field, int wireType) throws IOException {
    varint(((long) field << 3) | wireType);
  }

  void varint(long value) throws IOException {
    int n = 0;
    long v = value;
    while ((v & ~0x7FL) != 0) {
      scratch[n++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    scratch[n++] = (byte) v;
    raw(scratch, 0, n);
  }

  /** Four bytes, least significant first. */
  void fixed32(int bits) throws IOException {
    for (int i = 0; i < 4; i++) {
      scratch[i] = (byte) (bits >>> (8 * i));
    }
    raw(scratch, 0, 4);
  }

  void raw(byte[] bytes, int offset, int length) throws IOException {
    out.write(bytes, offset, length);
    written += length;
  }

  /** The number of bytes written so far. */
  long written() {
    return written;
  }
}
