package dev.modelkeeper.onnx;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The backends on the class path, found once with {@link ServiceLoader}, and which one serves a
 * model. Thread-safe.
 */
public final class ModelBackends {

  private static final List<ModelBackend> ALL = load();

  private ModelBackends() {}

  private static List<ModelBackend> load() {
    List<ModelBackend> out = new ArrayList<>();
    for (ModelBackend b :
        ServiceLoader.load(ModelBackend.class, ModelBackend.class.getClassLoader())) {
      out.add(b);
    }
    if (out.stream().noneMatch(b -> b.name().equals(OnnxBackend.NAME))) {
      out.add(
          0,
          new OnnxBackend()); // a class path without the service file (a shaded jar that lost it)
    }
    return List.copyOf(out);
  }

  /** Every backend found. */
  public static List<ModelBackend> all() {
    return ALL;
  }

  /** Their names, for messages: {@code 'onnxruntime', 'python'}. */
  public static String names() {
    StringBuilder out = new StringBuilder();
    for (ModelBackend b : ALL) {
      out.append(out.length() == 0 ? "" : ", ").append('\'').append(b.name()).append('\'');
    }
    return out.toString();
  }

  /**
   * The backend {@code config.pbtxt}'s {@code backend} and {@code platform} (either may be empty)
   * choose; ONNX Runtime when both are empty; null when no backend found serves them.
   */
  public static ModelBackend of(String platform, String backend) {
    if (!backend.isEmpty()) {
      for (ModelBackend b : ALL) {
        if (b.name().equals(backend)) {
          return b;
        }
      }
      return null;
    }
    if (!platform.isEmpty()) {
      for (ModelBackend b : ALL) {
        if (b.platforms().contains(platform)) {
          return b;
        }
      }
      return null;
    }
    return onnx();
  }

  /** The backend of a model with configuration {@code config}. */
  public static ModelBackend of(ModelConfig config) {
    dev.modelkeeper.onnx.triton.ModelConfig triton = config.declared().triton();
    if (triton == null) {
      return onnx();
    }
    ModelBackend b = of(triton.getPlatform(), triton.getBackend());
    return b == null ? onnx() : b; // refused before: TritonConfig.unsupported names it
  }

  private static ModelBackend onnx() {
    for (ModelBackend b : ALL) {
      if (b.name().equals(OnnxBackend.NAME)) {
        return b;
      }
    }
    throw new IllegalStateException("no ONNX backend");
  }
}
