package dev.modelkeeper.benchmarks.swap;

import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import dev.modelkeeper.onnx.optimized.OptimizedModels;
import java.nio.file.Path;

/**
 * The options of the pre-optimized variant; a class of its own, so that a jar without the cache
 * runs the other variants (its classes are only loaded when the variant is asked for). Stateless.
 */
final class PreOptimized {

  private PreOptimized() {}

  /** The server's model options with pre-optimized forms kept in {@code dir}. */
  static OnnxModelOptions options(Path dir) {
    return OnnxModelOptions.defaults()
        .withOptimizedModels(OptimizedModels.in(dir, OnnxRuntimeState.environment().getVersion()));
  }
}
