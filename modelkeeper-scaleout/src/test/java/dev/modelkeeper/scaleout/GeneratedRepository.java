package dev.modelkeeper.scaleout;

import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.demo.Mlp;
import dev.modelkeeper.onnx.remote.Manifest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a model repository of small random ONNX MLPs ({@code m01}, {@code m02}, ..., version 1,
 * input FP32 [-1, 8], output FP32 [-1, 4]) with its {@code manifest.sha256}, so that a static file
 * server over the folder is a remote repository. Stateless and thread-safe (each call writes its
 * own folder).
 */
public final class GeneratedRepository {

  /** Width of every model's input. */
  public static final int INPUT_WIDTH = 8;

  private GeneratedRepository() {}

  /** Writes {@code count} models into {@code dir} and returns their names, in order. */
  public static List<String> write(Path dir, int count) {
    List<String> names = new ArrayList<>();
    try {
      for (int i = 1; i <= count; i++) {
        String name = name(i);
        Path file = dir.resolve(name).resolve("1").resolve(ModelRepository.MODEL_FILE);
        Files.createDirectories(file.getParent());
        Mlp.random(1000 + i, INPUT_WIDTH, 16, 4).toOnnx(name).writeTo(file);
        names.add(name);
      }
      Manifest.writeTo(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the test repository to " + dir, e);
    }
    return names;
  }

  /** The name of model number {@code i} (1-based). */
  public static String name(int i) {
    return String.format("m%02d", i);
  }

  /** An inference request body for any of the models, with a request id. */
  public static String inferBody(String id) {
    return "{\"id\": \""
        + id
        + "\", \"inputs\": [{\"name\": \"input\", \"shape\": [1, "
        + INPUT_WIDTH
        + "], \"datatype\": \"FP32\", \"data\": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,"
        + " 0.8]}]}";
  }
}
