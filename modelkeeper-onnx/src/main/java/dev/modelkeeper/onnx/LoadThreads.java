package dev.modelkeeper.onnx;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.modelkeeper.core.LifecycleInterruptedException;
import dev.modelkeeper.core.ModelLoadException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that create ONNX Runtime sessions: graph parsing and optimization, the CPU-heavy part
 * of a load. A bounded pool (half the processors, at least one) of daemon threads that run at a
 * lower scheduling priority than the request path (niceness {@link #NICENESS} on Linux), so that a
 * load takes the CPU that requests leave idle and yields it as soon as a request needs it: a load
 * then slows the neighbours' requests by little, and itself by much only when the machine is
 * saturated. Thread-safe.
 *
 * <p>Java's own thread priorities do nothing on Linux without root and a JVM flag; a thread's
 * niceness is its own there (one task per thread), and raising it needs no privilege. Each pool
 * thread raises its own once, when it starts, with the system's {@code renice} on its task id;
 * where that is missing or refused, the pool runs at normal priority and says so once.
 */
final class LoadThreads {

  /** The niceness of the load threads (0 is normal, 19 the lowest priority). */
  static final int NICENESS = 10;

  /** The longest a caller waits for its session (a load also has the manager's own timeout). */
  private static final long WAIT_MINUTES = 10;

  private static final System.Logger LOG = System.getLogger(LoadThreads.class.getName());
  private static final AtomicBoolean REPORTED = new AtomicBoolean();
  private static final ExecutorService POOL = pool();

  private LoadThreads() {}

  /** Creates a session; on a load thread. */
  @FunctionalInterface
  interface SessionWork {
    OrtSession create() throws OrtException;
  }

  /**
   * Runs {@code work} on a load thread and returns the session it created; the caller waits. A
   * session with thread pools of its own ({@code settings}) is created on the caller's thread. When
   * the caller stops waiting (interrupted, or after {@link #WAIT_MINUTES}), the session made later
   * is closed.
   *
   * @throws OrtException what {@code work} threw
   * @throws ModelLoadException when the session took longer than {@link #WAIT_MINUTES}
   * @throws LifecycleInterruptedException when interrupted while waiting
   */
  static OrtSession createSession(String modelId, SessionSettings settings, SessionWork work)
      throws OrtException {
    if (settings.intraOpThreads() > 1 || settings.interOpThreads() > 1) {
      // the session's own thread pools start in the thread that creates it and would inherit its
      // lower priority: the model's runs would then yield to every other request
      return work.create();
    }
    AtomicBoolean abandoned = new AtomicBoolean();
    Future<OrtSession> made =
        POOL.submit(
            () -> {
              OrtSession session = work.create();
              if (abandoned.get()) {
                session.close();
              }
              return session;
            });
    try {
      return made.get(WAIT_MINUTES, TimeUnit.MINUTES);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof OrtException) {
        throw (OrtException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      throw (Error) cause;
    } catch (InterruptedException | TimeoutException e) {
      abandoned.set(true);
      closeIfMade(made);
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
        throw new LifecycleInterruptedException(
            "interrupted while ONNX Runtime created the session of '" + modelId + "'");
      }
      throw new ModelLoadException(
          "ONNX Runtime took more than "
              + WAIT_MINUTES
              + " minutes to create the session of '"
              + modelId
              + "'");
    }
  }

  /** Closes the session of {@code made} if it was created before the caller gave up waiting. */
  private static void closeIfMade(Future<OrtSession> made) {
    if (!made.cancel(false) && made.isDone()) {
      try {
        made.get().close();
      } catch (ExecutionException | OrtException | InterruptedException | RuntimeException e) {
        // it failed, or closed itself: nothing to close
      }
    }
  }

  private static ExecutorService pool() {
    int threads = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    AtomicInteger count = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t =
                  new Thread(
                      () -> {
                        lowerPriority();
                        r.run();
                      },
                      "modelkeeper-load-" + count.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    pool.allowCoreThreadTimeOut(true); // no threads kept while nothing loads
    return pool;
  }

  /** Raises this thread's niceness to {@link #NICENESS}, where the system allows it. */
  private static void lowerPriority() {
    Path self = Path.of("/proc/thread-self");
    if (!Files.exists(self)) {
      return; // not Linux: the load threads run at normal priority
    }
    String problem;
    try {
      String tid = Files.readSymbolicLink(self).getFileName().toString();
      Process renice =
          new ProcessBuilder("renice", "-n", Integer.toString(NICENESS), "-p", tid)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!renice.waitFor(5, TimeUnit.SECONDS)) {
        renice.destroyForcibly();
        problem = "renice did not finish within 5 s";
      } else if (renice.exitValue() != 0) {
        problem = "renice exited with status " + renice.exitValue();
      } else {
        return;
      }
    } catch (IOException e) {
      problem = "cannot run renice (" + e.getMessage() + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      problem = "interrupted while running renice";
    }
    if (REPORTED.compareAndSet(false, true)) {
      LOG.log(
          Level.INFO,
          "model loads run at normal priority, beside requests: "
              + problem
              + "; install util-linux's renice to give requests the CPU first");
    }
  }
}
