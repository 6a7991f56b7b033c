package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.onnx.triton.ModelWarmup;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Runs the {@code model_warmup} samples of a model's {@code config.pbtxt} as the last step of its
 * load, so that, as in Triton, the model is ready only once they ran. Stateless.
 *
 * <p>A sample's inputs are zeros ({@code zero_data}, or nothing said), seeded random values ({@code
 * random_data}; BYTES inputs get empty strings) or the contents of {@code <model
 * folder>/warmup/<input_data_file>} in the binary tensor layout; a batching model gets {@code
 * batch_size} rows of them. Each sample runs {@code count} times, at least once.
 */
final class WarmUp {

  private static final long MAX_FILE_BYTES = 64L << 20;

  private WarmUp() {}

  /**
   * Runs the samples {@code config} declares on {@code model}.
   *
   * @throws ModelLoadException naming the config file and the sample when one cannot be built or
   *     fails to run
   */
  static void run(InferenceModel model, ModelConfig config) {
    dev.modelkeeper.onnx.triton.ModelConfig triton = config.declared().triton();
    if (triton == null || triton.getModelWarmupCount() == 0) {
      return;
    }
    Path modelDir = Path.of(config.declared().file()).getParent();
    for (ModelWarmup sample : triton.getModelWarmupList()) {
      String where =
          config.declared().file()
              + ": model_warmup '"
              + sample.getName()
              + "' of '"
              + model.metadata().id()
              + "'";
      Map<String, Tensor> inputs;
      try {
        inputs = inputs(sample, config.maxBatchSize(), modelDir);
      } catch (IllegalArgumentException e) {
        throw new ModelUnservableException(where + " cannot be built: " + e.getMessage(), e, false);
      } catch (IOException e) {
        throw new ModelLoadException(where + " cannot be built: " + e.getMessage(), e);
      }
      for (int i = 0; i < Math.max(1, sample.getCount()); i++) {
        try {
          model.infer(inputs);
        } catch (RuntimeException e) {
          // the same model fails on the same data every time
          throw new ModelUnservableException(where + " failed: " + e.getMessage(), e, false);
        }
      }
    }
  }

  private static Map<String, Tensor> inputs(ModelWarmup sample, int maxBatchSize, Path modelDir)
      throws IOException {
    int rows = maxBatchSize > 0 ? Math.max(1, sample.getBatchSize()) : 1;
    Map<String, Tensor> out = new LinkedHashMap<>();
    Random random = new Random(sample.getName().hashCode());
    for (Map.Entry<String, ModelWarmup.Input> e : sample.getInputsMap().entrySet()) {
      String name = e.getKey();
      ModelWarmup.Input in = e.getValue();
      Datatype dt = TritonConfig.datatype(in.getDataType());
      if (dt == null) {
        throw new IllegalArgumentException(
            "input '" + name + "' has data_type " + in.getDataType().name() + ", not supported");
      }
      List<Long> dims = in.getDimsList();
      long perRow = 1;
      for (long d : dims) {
        if (d < 0) {
          throw new IllegalArgumentException(
              "input '" + name + "' needs dims of known size, has " + dims);
        }
        perRow *= d;
      }
      if (perRow * rows > (1 << 26)) {
        throw new IllegalArgumentException("input '" + name + "' has more than 2^26 elements");
      }
      int lead = maxBatchSize > 0 ? 1 : 0;
      long[] shape = new long[dims.size() + lead];
      if (lead == 1) {
        shape[0] = rows;
      }
      for (int i = 0; i < dims.size(); i++) {
        shape[lead + i] = dims.get(i);
      }
      int count = (int) (perRow * rows);
      ByteBuffer raw = rows(row(in, dt, (int) perRow, random, modelDir), rows);
      out.put(name, Tensor.of(name, dt, shape, dt.fromBinary(name, raw, count)));
    }
    return out;
  }

  /** One row of the input in the binary tensor layout. */
  private static ByteBuffer row(
      ModelWarmup.Input in, Datatype dt, int perRow, Random random, Path modelDir)
      throws IOException {
    int size = dt == Datatype.BYTES ? 4 : dt.elementBytes(); // BYTES: empty strings
    ByteBuffer b = ByteBuffer.allocate(size * perRow).order(ByteOrder.LITTLE_ENDIAN);
    switch (in.getInputDataTypeCase()) {
      case INPUT_DATA_FILE:
        Path folder = modelDir.resolve("warmup");
        Path file = folder.resolve(in.getInputDataFile()).normalize();
        if (!file.startsWith(folder)) {
          throw new IllegalArgumentException(
              "input_data_file '" + in.getInputDataFile() + "' lies outside " + folder);
        }
        if (Files.size(file) > MAX_FILE_BYTES) {
          throw new IllegalArgumentException(file + " is larger than 64 MiB");
        }
        byte[] bytes = Files.readAllBytes(file);
        if (dt != Datatype.BYTES && bytes.length != b.capacity()) {
          throw new IllegalArgumentException(
              file
                  + " holds "
                  + bytes.length
                  + " bytes; "
                  + perRow
                  + " "
                  + dt
                  + " elements take "
                  + b.capacity());
        }
        return ByteBuffer.wrap(bytes);
      case RANDOM_DATA:
        for (int i = 0; i < perRow; i++) {
          if (dt == Datatype.FP32) {
            b.putFloat(random.nextFloat());
          } else if (dt == Datatype.FP64) {
            b.putDouble(random.nextDouble());
          } else if (dt == Datatype.BYTES) {
            b.putInt(0);
          } else {
            b.put((byte) random.nextInt(2)); // 0 or 1 fits every integer type and BOOL
            b.put(new byte[size - 1]);
          }
        }
        return b.flip();
      default:
        return b;
    }
  }

  /** {@code row} repeated {@code rows} times, little-endian. */
  private static ByteBuffer rows(ByteBuffer row, int rows) {
    ByteBuffer out = ByteBuffer.allocate(row.remaining() * rows).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < rows; i++) {
      out.put(row.duplicate());
    }
    return out.flip();
  }
}
