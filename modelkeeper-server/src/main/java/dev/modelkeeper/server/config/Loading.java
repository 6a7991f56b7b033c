package dev.modelkeeper.server.config;

import io.soabase.recordbuilder.core.RecordBuilder;
import java.nio.file.Path;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How models are loaded.
 *
 * @param preOptimize whether a pre-optimized form of each model file is kept in {@code formsDir},
 *     so that later loads of it skip parsing and graph optimization (see {@code
 *     dev.modelkeeper.onnx.optimized})
 * @param formsDir where the pre-optimized forms are kept, shared by the processes given the same
 *     folder; null keeps none
 */
@RecordBuilder
public record Loading(boolean preOptimize, @Nullable Path formsDir) implements LoadingBuilder.With {

  /** Pre-optimized forms on, in no folder: a server given no folder keeps none. */
  public static final Loading DEFAULTS = new Loading(true, null);

  /** The folder the server keeps pre-optimized forms in; empty when it keeps none. */
  public Optional<Path> optimizedModelsDir() {
    return preOptimize && formsDir != null ? Optional.of(formsDir) : Optional.empty();
  }
}
