package dev.modelkeeper.onnx.writer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * The {@code raw_data} of an FP32 tensor: its values little-endian, taken from a {@link
 * FloatGenerator} and written a chunk at a time, so at most one chunk of the tensor is held as
 * bytes. Not thread-safe: one write at a time.
 */
final class FloatRawData implements FieldBody {

  /** Values per chunk: 32 KiB of bytes. */
  private static final int CHUNK = 8192;

  private final long count;
  private final FloatGenerator values;

  FloatRawData(long count, FloatGenerator values) {
    this.count = count;
    this.values = values;
  }

  @Override
  public long length() {
    return count * Float.BYTES;
  }

  @Override
  public void writeTo(ProtoWriter out) throws IOException {
    int chunk = (int) Math.min(CHUNK, count);
    float[] floats = new float[chunk];
    ByteBuffer bytes = ByteBuffer.allocate(chunk * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    FloatBuffer asFloats = bytes.asFloatBuffer();
    for (long first = 0; first < count; first += chunk) {
      int n = (int) Math.min(chunk, count - first);
      values.generate(first, floats, n);
      asFloats.clear();
      asFloats.put(floats, 0, n);
      out.raw(bytes.array(), 0, n * Float.BYTES);
    }
  }
}
