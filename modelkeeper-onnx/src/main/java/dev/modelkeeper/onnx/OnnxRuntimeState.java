package dev.modelkeeper.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.ByteArrayOutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * ONNX Runtime's own process-wide state. {@link #environment()} is the one way in to its
 * environment: the first call creates it with ONNX Runtime's native log routed into the process's
 * log ({@link OnnxRuntimeLog}), which only works if nothing created it before, so nothing in
 * ModelKeeper calls {@code OrtEnvironment.getEnvironment()} itself.
 *
 * <p>The first session a process creates and runs sets up state that stays for the life of the
 * process (about 7 MB measured here: kernel registries, allocators, thread-local buffers);
 * whichever model came first would otherwise be measured and charged for it. {@link
 * #ensureStarted()} pays for it once with a one-node model built in memory, so that it is part of
 * the process before the first model and before the server splits its memory cap. Thread-safe.
 */
public final class OnnxRuntimeState {

  private static final System.Logger LOG = System.getLogger(OnnxRuntimeState.class.getName());

  private OnnxRuntimeState() {}

  /**
   * ONNX Runtime's environment, created by the first call with its native messages going to the
   * {@code System.Logger} "onnxruntime" (or, when that cannot be done, to stderr as ONNX Runtime
   * writes them by default, said once in the log).
   */
  public static OrtEnvironment environment() {
    return Environment.INSTANCE;
  }

  /** ONNX Runtime's version, e.g. {@code 1.22.0}; creates the environment when not yet done. */
  public static String version() {
    return environment().getVersion();
  }

  /** Creates, runs and closes one tiny session, the first time it is called; at once after. */
  public static void ensureStarted() {
    Started.touch();
  }

  /** The environment, created once under the JVM's class-init lock and read without one after. */
  private static final class Environment {
    static final OrtEnvironment INSTANCE;

    static {
      OnnxRuntimeLog.install();
      INSTANCE = OrtEnvironment.getEnvironment();
    }
  }

  /** The class whose initialization does the work, once, under the JVM's class-init lock. */
  private static final class Started {
    static {
      OrtEnvironment env = environment();
      try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
          OrtSession session = env.createSession(identityModel(), opts);
          OnnxTensor x = OnnxTensor.createTensor(env, new float[] {0f});
          OrtSession.Result ignored = session.run(Map.of("x", x))) {
        LOG.log(Level.DEBUG, "ONNX Runtime started");
      } catch (OrtException e) {
        // models will fail to load with their own, clearer errors; this is only a head start
        LOG.log(Level.DEBUG, "ONNX Runtime's warm-up session failed: {0}", e.getMessage());
      }
    }

    static void touch() {}
  }

  /**
   * The ONNX model {@code y = Identity(x)}, x and y float tensors of shape [1], serialized as the
   * ModelProto of onnx.proto (field numbers in the comments).
   */
  static byte[] identityModel() {
    byte[] shape = message(field(1, message(varint(1, 1)))); // TensorShapeProto.dim.dim_value
    byte[] type = message(field(1, message(varint(1, 1), field(2, shape)))); // tensor_type FLOAT
    byte[] node =
        message(
            field(1, text("x")), // NodeProto.input
            field(2, text("y")), // output
            field(4, text("Identity"))); // op_type
    byte[] graph =
        message(
            field(1, node), // GraphProto.node
            field(2, text("warm-up")), // name
            field(11, message(field(1, text("x")), field(2, type))), // input: ValueInfoProto
            field(12, message(field(1, text("y")), field(2, type)))); // output
    return message(
        varint(1, 8), // ModelProto.ir_version
        field(7, graph), // graph
        field(8, message(varint(2, 13)))); // opset_import: default domain, version 13
  }

  private static byte[] message(byte[]... fields) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] f : fields) {
      out.writeBytes(f);
    }
    return out.toByteArray();
  }

  /** A varint field (wire type 0). */
  private static byte[] varint(int number, long value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writeVarint(out, (long) number << 3);
    writeVarint(out, value);
    return out.toByteArray();
  }

  /** A length-delimited field (wire type 2). */
  private static byte[] field(int number, byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writeVarint(out, ((long) number << 3) | 2);
    writeVarint(out, body.length);
    out.writeBytes(body);
    return out.toByteArray();
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void writeVarint(ByteArrayOutputStream out, long value) {
    long v = value;
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }
}
