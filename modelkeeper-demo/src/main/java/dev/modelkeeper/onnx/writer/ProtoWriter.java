package dev.modelkeeper.onnx.writer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A minimal Protocol Buffers encoder: appends fields of one message to a growable byte buffer. Not
 * thread-safe; one instance builds one message.
 */
final class ProtoWriter {

  static final int VARINT = 0;
  static final int FIXED64 = 1;
  static final int LENGTH_DELIMITED = 2;
  static final int FIXED32 = 5;

  private byte[] buf = new byte[64];
  private int size;

  /**
   * A varint field (int32, int64, enum, bool). Negative values take ten bytes, as protobuf does.
   */
  ProtoWriter int64(int field, long value) {
    tag(field, VARINT);
    varint(value);
    return this;
  }

  ProtoWriter string(int field, String value) {
    return bytes(field, value.getBytes(StandardCharsets.UTF_8));
  }

  ProtoWriter bytes(int field, byte[] value) {
    tag(field, LENGTH_DELIMITED);
    varint(value.length);
    append(value, 0, value.length);
    return this;
  }

  /** An embedded message. */
  ProtoWriter message(int field, ProtoWriter message) {
    tag(field, LENGTH_DELIMITED);
    varint(message.size);
    append(message.buf, 0, message.size);
    return this;
  }

  ProtoWriter float32(int field, float value) {
    tag(field, FIXED32);
    int bits = Float.floatToIntBits(value);
    ensure(4);
    for (int i = 0; i < 4; i++) {
      buf[size++] = (byte) (bits >>> (8 * i));
    }
    return this;
  }

  /** A packed repeated varint field. */
  ProtoWriter packedInt64(int field, long[] values) {
    ProtoWriter body = new ProtoWriter();
    for (long v : values) {
      body.varint(v);
    }
    tag(field, LENGTH_DELIMITED);
    varint(body.size);
    append(body.buf, 0, body.size);
    return this;
  }

  int size() {
    return size;
  }

  byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }

  private void tag(int field, int wireType) {
    varint(((long) field << 3) | wireType);
  }

  private void varint(long value) {
    ensure(10);
    long v = value;
    while ((v & ~0x7FL) != 0) {
      buf[size++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[size++] = (byte) v;
  }

  private void append(byte[] src, int off, int len) {
    ensure(len);
    System.arraycopy(src, off, buf, size, len);
    size += len;
  }

  private void ensure(int extra) {
    long needed = (long) size + extra;
    if (needed > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("protobuf message larger than 2 GiB");
    }
    if (needed > buf.length) {
      long grown = Math.max(needed, Math.min((long) buf.length * 2, Integer.MAX_VALUE - 8));
      buf = Arrays.copyOf(buf, (int) grown);
    }
  }
}
