package dev.modelkeeper.onnx.writer;

/**
 * Produces the values of an FP32 initializer while the model is written (see {@link
 * OnnxGraphBuilder#initializer(String, long[], FloatGenerator)}), so a large tensor is never held
 * in memory whole. The writer asks for the values in order, a chunk at a time, starting again from
 * value 0 each time the model is written; every write must get the same values. The builder calls
 * its generators only from the thread that writes the model, so implementations need not be
 * thread-safe.
 */
@FunctionalInterface
public interface FloatGenerator {

  /**
   * Stores the values {@code first} to {@code first + count - 1} (row-major) in {@code into[0]} to
   * {@code into[count - 1]}.
   */
  void generate(long first, float[] into, int count);
}
