package dev.modelkeeper.onnx;

import ai.onnxruntime.OrtEnvironment;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.sun.jna.Callback;
import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.System.Logger.Level;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * ONNX Runtime's own messages in the process's log. ONNX Runtime writes its native log (an
 * initializer it removed, an optimizer that gave up, a kernel that failed) straight to file
 * descriptor 2, ANSI-coloured, past every Java logger, and its Java API has no hook for it. Its C
 * API has one: the process-wide environment is created once, and whoever creates it first may give
 * it a logging function ({@code OrtApi::CreateEnvWithCustomLogger}); every later creation, ONNX
 * Runtime's Java API's included, returns that same environment. {@link #install()} creates it so,
 * before anything else does, through JNA, with a logging function that turns each message into one
 * event of the {@code System.Logger} {@value #LOGGER}: WARNING as WARNING, ERROR and FATAL as ERROR
 * (ONNX Runtime drops VERBOSE and INFO itself, below the environment's threshold).
 *
 * <p>When it cannot (no JNA native for this platform, reflection refused, the environment already
 * created), ONNX Runtime keeps writing to stderr as it does by default, and one INFO line says why.
 * Thread-safe.
 */
final class OnnxRuntimeLog {

  /** The logger ONNX Runtime's messages go to. */
  static final String LOGGER = "onnxruntime";

  /**
   * Where {@code CreateEnvWithCustomLogger} sits in {@code struct OrtApi} (onnxruntime_c_api.h: its
   * members are CreateStatus, GetErrorCode, GetErrorMessage, CreateEnv, CreateEnvWithCustomLogger,
   * ...; the struct only ever grows at its end).
   */
  private static final int CREATE_ENV_WITH_CUSTOM_LOGGER = 4;

  /** Where {@code GetErrorMessage} sits in {@code struct OrtApi}. */
  private static final int GET_ERROR_MESSAGE = 2;

  /** {@code ORT_LOGGING_LEVEL_WARNING}: the least severe message ONNX Runtime passes on. */
  private static final int SEVERITY_THRESHOLD = 2;

  private static final System.Logger LOG = System.getLogger(OnnxRuntimeLog.class.getName());

  /**
   * The logging function the environment holds. ONNX Runtime may call it until the process ends,
   * and JNA frees a callback's native stub once the callback is collected: this keeps it reachable.
   */
  private static final Sink SINK = new Sink(System.getLogger(LOGGER));

  @GuardedBy("OnnxRuntimeLog.class")
  private static boolean tried;

  private OnnxRuntimeLog() {}

  /**
   * Creates ONNX Runtime's environment with {@link #LOGGER} as its log, the first time it is
   * called; does nothing after. Never throws: when it cannot, ONNX Runtime logs to stderr as
   * before.
   */
  static synchronized void install() {
    if (tried) {
      return;
    }
    tried = true;
    String reason = createEnvironment();
    if (reason != null) {
      LOG.log(
          Level.INFO,
          "ONNX Runtime writes its own messages to stderr unformatted, not to this log: {0}",
          reason);
    }
  }

  /** Creates the environment with {@link #SINK}; null when done, else why it was not. */
  private static String createEnvironment() {
    try {
      Pointer api = ortApi();
      // OrtEnvironment.getEnvironment's own lock: no one creates the environment meanwhile
      synchronized (OrtEnvironment.class) {
        if (staticField(OrtEnvironment.class, "INSTANCE").get(null) != null) {
          return "the ONNX Runtime environment was created before its log could be routed";
        }
        // (logging_function, logger_param, log_severity_level, logid, out); the logid of the
        // environment's own messages is empty, a session's is its model. The environment is never
        // released: ONNX Runtime may log until the process ends
        Object[] args = {SINK, Pointer.NULL, SEVERITY_THRESHOLD, "", new PointerByReference()};
        Pointer status =
            (Pointer) function(api, CREATE_ENV_WITH_CUSTOM_LOGGER).invoke(Pointer.class, args);
        if (status != null) {
          return "ONNX Runtime refused the logging function: " + errorMessage(api, status);
        }
        return null;
      }
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return e.toString();
    }
  }

  /**
   * ONNX Runtime's {@code OrtApi} table, as its Java API keeps it. OrtEnvironment's static
   * initializer loads ONNX Runtime's natives and sets it; it creates no environment.
   */
  static Pointer ortApi() throws ReflectiveOperationException {
    ClassLoader loader = OrtEnvironment.class.getClassLoader();
    Class.forName(OrtEnvironment.class.getName(), true, loader);
    Class<?> runtime = Class.forName("ai.onnxruntime.OnnxRuntime", false, loader);
    long api = staticField(runtime, "ortApiHandle").getLong(null);
    if (api == 0) {
      throw new IllegalStateException("ONNX Runtime's API is not initialized");
    }
    return new Pointer(api);
  }

  /**
   * The message of an {@code OrtStatus}. The status is not released (one small allocation, on a
   * path taken once at most): where ReleaseStatus sits in OrtApi is not worth knowing for it.
   */
  static String errorMessage(Pointer api, Pointer status) {
    return (String) function(api, GET_ERROR_MESSAGE).invoke(String.class, new Object[] {status});
  }

  private static Field staticField(Class<?> type, String name) throws NoSuchFieldException {
    Field field = type.getDeclaredField(name);
    field.setAccessible(true);
    return field;
  }

  /** The function at {@code index} of {@code struct OrtApi}. */
  private static Function function(Pointer api, int index) {
    return Function.getFunction(api.getPointer((long) index * Native.POINTER_SIZE));
  }

  /** The {@code System.Logger} level of an ONNX Runtime severity ({@code OrtLoggingLevel}). */
  static Level level(int severity) {
    switch (severity) {
      case 0: // VERBOSE
        return Level.TRACE;
      case 1: // INFO: ONNX Runtime's is chatty (each session's graph partitioning and more)
        return Level.DEBUG;
      case 2: // WARNING
        return Level.WARNING;
      default: // ERROR, FATAL
        return Level.ERROR;
    }
  }

  /** {@code OrtLoggingFunction} as JNA calls it. */
  interface LoggingFunction extends Callback {
    void invoke(
        Pointer param,
        int severity,
        Pointer category,
        Pointer logid,
        Pointer codeLocation,
        Pointer message);
  }

  /**
   * Logs each message of ONNX Runtime as one event, the first time it is said (its repeats at
   * DEBUG): the message, prefixed with the logger id (a session's is its model, {@code
   * name/version}) and, at DEBUG, followed by where in ONNX Runtime it was logged. Called on
   * whichever thread logs: one of ours creating or running a session, or one of ONNX Runtime's own.
   * Throws nothing back into ONNX Runtime.
   */
  static final class Sink implements LoggingFunction {
    /**
     * How ONNX Runtime's warning that a pre-optimized form it writes may hold kernels for this
     * processor only begins: expected, since the form's key names the processor, so it is logged at
     * DEBUG (see {@link dev.modelkeeper.onnx.optimized}).
     */
    static final String HARDWARE_SPECIFIC_FORM =
        "Serializing optimized model with Graph Optimization level greater than";

    /** Messages remembered to say each once; the least recently repeated are forgotten first. */
    private static final int REMEMBERED = 1024;

    private final System.Logger log;

    /** The latest messages logged at their level; a repeat of one is logged at DEBUG. */
    @GuardedBy("itself")
    private final Map<String, Boolean> said =
        new LinkedHashMap<>(64, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED;
          }
        };

    Sink(System.Logger log) {
      this.log = log;
    }

    @Override
    public void invoke(
        Pointer param,
        int severity,
        Pointer category,
        Pointer logid,
        Pointer codeLocation,
        Pointer message) {
      try {
        String body = string(message);
        Level level = body.startsWith(HARDWARE_SPECIFIC_FORM) ? Level.DEBUG : level(severity);
        if (log.isLoggable(level)) {
          // a model that warns on every run (a declared shape it does not keep) says it once
          String line = text(string(logid), string(codeLocation), body);
          boolean first;
          synchronized (said) {
            first = said.put(line, Boolean.TRUE) == null;
          }
          if (first) {
            log.log(level, line);
          } else {
            log.log(Level.DEBUG, () -> line + " (again)");
          }
        }
      } catch (RuntimeException e) {
        // a logging backend that fails has nowhere to report it; ONNX Runtime must go on
      }
    }

    private String text(String logid, String codeLocation, String message) {
      StringBuilder text = new StringBuilder(message.length() + 64);
      if (!logid.isEmpty()) {
        text.append(logid).append(": ");
      }
      text.append(message);
      if (!codeLocation.isEmpty() && log.isLoggable(Level.DEBUG)) {
        text.append(" (").append(codeLocation).append(')');
      }
      return text.toString();
    }

    private static String string(Pointer cString) {
      return cString == null ? "" : cString.getString(0, StandardCharsets.UTF_8.name());
    }
  }
}
