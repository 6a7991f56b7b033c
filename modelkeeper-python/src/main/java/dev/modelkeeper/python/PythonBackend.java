package dev.modelkeeper.python;

import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelBackend;
import dev.modelkeeper.onnx.ModelCaller;
import dev.modelkeeper.onnx.OnnxModelOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Triton's Python backend ({@code backend: "python"}, {@code 1/model.py} with {@code class
 * TritonPythonModel}) as a {@link ModelBackend}: each instance of a model is a child process of the
 * server ({@link PythonModel}). The interpreter is {@code python3} on the {@code PATH} unless the
 * system property {@value #PYTHON_PROPERTY} (the server's {@code --python}) or the environment
 * variable {@value #PYTHON_ENV} names another; it needs numpy. Thread-safe.
 */
public final class PythonBackend implements ModelBackend {

  /** Its name in {@code config.pbtxt}. */
  public static final String NAME = "python";

  /** The system property naming the interpreter. */
  public static final String PYTHON_PROPERTY = "modelkeeper.python";

  /** The environment variable naming the interpreter, when the property is not set. */
  public static final String PYTHON_ENV = "MODELKEEPER_PYTHON";

  /**
   * What a Python model is expected to hold before it was measured: an interpreter with numpy is
   * ~30 MB, and models load their own data; conservative, so that a first load stays under the cap.
   */
  public static final long ESTIMATED_BYTES = 256L << 20;

  /** The files the child runs, written into the temporary folder (see {@link #writeRuntime}). */
  private static final List<String> RUNTIME =
      List.of("modelkeeper_runner.py", "triton_python_backend_utils.py");

  private volatile Path runtime;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String defaultModelFileName() {
    return "model.py";
  }

  @Override
  public long estimatedPeakBytes(long fileBytes) {
    return ESTIMATED_BYTES;
  }

  @Override
  public InferenceModel load(ModelArtifact artifact, OnnxModelOptions options) {
    return load(artifact, options, ModelCaller.NONE);
  }

  @Override
  public InferenceModel load(ModelArtifact artifact, OnnxModelOptions options, ModelCaller caller) {
    PythonModel model = PythonModel.load(artifact, settings(), caller);
    long fileBytes;
    try {
      fileBytes = Files.size(artifact.modelFile());
    } catch (IOException e) {
      fileBytes = 0;
    }
    options
        .memoryCosts()
        .recordLoad(artifact.id(), fileBytes, model.sizeBytes(), model.sizeBytes());
    return model;
  }

  /** The interpreter and timeouts in force. */
  Settings settings() {
    String python = System.getProperty(PYTHON_PROPERTY);
    if (python == null || python.isBlank()) {
      python = System.getenv(PYTHON_ENV);
    }
    if (python == null || python.isBlank()) {
      python = "python3";
    }
    return new Settings(
        python, runtime(), Duration.ofSeconds(120), Duration.ofSeconds(60), Duration.ofSeconds(10));
  }

  private Path runtime() {
    Path r = runtime;
    if (r == null) {
      synchronized (this) {
        r = runtime;
        if (r == null) {
          r = writeRuntime();
          runtime = r;
        }
      }
    }
    return r;
  }

  /**
   * The runtime's files in {@code <tmpdir>/modelkeeper-python-<digest of their contents>}: written
   * once (each into a temporary file, then moved into place) and shared by every server of this
   * version on the machine, so that none is left behind per process.
   */
  private static Path writeRuntime() {
    try {
      Map<String, byte[]> files = new LinkedHashMap<>();
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (String name : RUNTIME) {
        try (InputStream in = PythonBackend.class.getResourceAsStream("pylib/" + name)) {
          if (in == null) {
            throw new IllegalStateException("the jar lacks " + name);
          }
          byte[] bytes = in.readAllBytes();
          files.put(name, bytes);
          digest.update(name.getBytes(StandardCharsets.UTF_8));
          digest.update(bytes);
        }
      }
      String hash = HexFormat.of().formatHex(digest.digest()).substring(0, 16);
      Path dir =
          Files.createDirectories(
              Path.of(System.getProperty("java.io.tmpdir"), "modelkeeper-python-" + hash));
      for (Map.Entry<String, byte[]> f : files.entrySet()) {
        Path file = dir.resolve(f.getKey());
        if (Files.exists(file) && Arrays.equals(Files.readAllBytes(file), f.getValue())) {
          continue;
        }
        Path part = Files.createTempFile(dir, f.getKey(), ".part");
        Files.write(part, f.getValue());
        Files.move(part, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the Python backend's runtime files", e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * How Python models run.
   *
   * @param python the interpreter
   * @param runtime the folder holding the runner and {@code triton_python_backend_utils}
   * @param initializeTimeout how long {@code initialize} may take
   * @param executeTimeout how long one {@code execute} may take before the process is stopped
   * @param drainTimeout how long {@code finalize} may take before the process is killed
   */
  record Settings(
      String python,
      Path runtime,
      Duration initializeTimeout,
      Duration executeTimeout,
      Duration drainTimeout) {

    Settings withExecuteTimeout(Duration timeout) {
      return new Settings(python, runtime, initializeTimeout, timeout, drainTimeout);
    }

    Settings withPython(String interpreter) {
      return new Settings(interpreter, runtime, initializeTimeout, executeTimeout, drainTimeout);
    }
  }
}
