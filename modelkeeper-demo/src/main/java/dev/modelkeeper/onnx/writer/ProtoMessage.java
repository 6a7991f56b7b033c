package dev.modelkeeper.onnx.writer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One protobuf message as the ordered list of its fields, written in two passes: {@link #length()}
 * adds up the encoded sizes of the fields (an embedded message's length comes from the same pass
 * over it), then {@link #writeTo} streams them, so no message is encoded into a buffer and no
 * message's bytes are copied into its parent's. Computing a length walks the nested messages again
 * each time, which is cheap for the shallow trees of an ONNX model. Not thread-safe: one instance
 * is built and written by one thread.
 */
final class ProtoMessage implements FieldBody {

  /** One encoded field: its tag, then a varint, a fixed32 value or a length and a body. */
  private interface Field {
    long size();

    void writeTo(ProtoWriter out) throws IOException;
  }

  private record VarintField(int number, long value) implements Field {
    @Override
    public long size() {
      return ProtoWriter.tagSize(number) + ProtoWriter.varintSize(value);
    }

    @Override
    public void writeTo(ProtoWriter out) throws IOException {
      out.tag(number, ProtoWriter.VARINT);
      out.varint(value);
    }
  }

  private record Fixed32Field(int number, int bits) implements Field {
    @Override
    public long size() {
      return ProtoWriter.tagSize(number) + 4L;
    }

    @Override
    public void writeTo(ProtoWriter out) throws IOException {
      out.tag(number, ProtoWriter.FIXED32);
      out.fixed32(bits);
    }
  }

  private record LengthDelimitedField(int number, FieldBody body) implements Field {
    @Override
    public long size() {
      long length = body.length();
      return ProtoWriter.tagSize(number) + ProtoWriter.varintSize(length) + length;
    }

    @Override
    public void writeTo(ProtoWriter out) throws IOException {
      long length = body.length();
      out.tag(number, ProtoWriter.LENGTH_DELIMITED);
      out.varint(length);
      long start = out.written();
      body.writeTo(out);
      long actual = out.written() - start;
      if (actual != length) {
        throw new IllegalStateException(
            "field " + number + " wrote " + actual + " bytes after announcing " + length);
      }
    }
  }

  private record ByteArrayBody(byte[] bytes) implements FieldBody {
    @Override
    public long length() {
      return bytes.length;
    }

    @Override
    public void writeTo(ProtoWriter out) throws IOException {
      out.raw(bytes, 0, bytes.length);
    }
  }

  private record PackedVarintBody(long[] values) implements FieldBody {
    @Override
    public long length() {
      long length = 0;
      for (long v : values) {
        length += ProtoWriter.varintSize(v);
      }
      return length;
    }

    @Override
    public void writeTo(ProtoWriter out) throws IOException {
      for (long v : values) {
        out.varint(v);
      }
    }
  }

  /** The largest message {@link #toByteArray} encodes (protobuf's limit is 2 GiB). */
  static final long MAX_ARRAY_LENGTH = Integer.MAX_VALUE - 8;

  private final List<Field> fields = new ArrayList<>();

  /** A varint field (int32, int64, enum, bool). */
  ProtoMessage int64(int field, long value) {
    fields.add(new VarintField(field, value));
    return this;
  }

  ProtoMessage float32(int field, float value) {
    fields.add(new Fixed32Field(field, Float.floatToIntBits(value)));
    return this;
  }

  ProtoMessage string(int field, String value) {
    return bytes(field, value.getBytes(StandardCharsets.UTF_8));
  }

  /** A bytes field; the array is kept, not copied. */
  ProtoMessage bytes(int field, byte[] value) {
    return lengthDelimited(field, new ByteArrayBody(value));
  }

  /** A packed repeated varint field; the array is kept, not copied. */
  ProtoMessage packedInt64(int field, long[] values) {
    return lengthDelimited(field, new PackedVarintBody(values));
  }

  /** An embedded message, written when this one is. */
  ProtoMessage message(int field, ProtoMessage message) {
    return lengthDelimited(field, message);
  }

  /** A length-delimited field whose body is produced when this message is written. */
  ProtoMessage lengthDelimited(int field, FieldBody body) {
    fields.add(new LengthDelimitedField(field, body));
    return this;
  }

  /** The encoded size of this message. */
  @Override
  public long length() {
    long length = 0;
    for (Field f : fields) {
      length += f.size();
    }
    return length;
  }

  /** Writes the fields in the order they were added. */
  @Override
  public void writeTo(ProtoWriter out) throws IOException {
    for (Field f : fields) {
      f.writeTo(out);
    }
  }

  /** The encoded message, for messages under 2 GiB. */
  byte[] toByteArray() {
    long length = length();
    if (length > MAX_ARRAY_LENGTH) {
      throw new IllegalStateException("protobuf message larger than 2 GiB");
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) length);
    try {
      writeTo(new ProtoWriter(bytes));
    } catch (IOException e) {
      throw new UncheckedIOException("a byte array stream failed", e);
    }
    return bytes.toByteArray();
  }
}
