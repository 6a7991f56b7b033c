package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Sessions are created on the load threads, which run at a lower priority than the request path (on
 * Linux, where this runs), and what a creation throws reaches the caller as it was thrown.
 */
class LoadThreadsTest {

  private static final Path IRIS = Path.of("src/test/resources/test-repository/iris/1/model.onnx");
  private static final SessionSettings ONE_THREAD = new SessionSettings(1, 1, false);

  @Test
  void aSession_isCreatedOnALoadThread_atTheLowerPriority() throws Exception {
    AtomicReference<String> thread = new AtomicReference<>();
    AtomicInteger niceness = new AtomicInteger(Integer.MIN_VALUE);
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
        OrtSession session =
            LoadThreads.createSession(
                "iris/1",
                ONE_THREAD,
                () -> {
                  thread.set(Thread.currentThread().getName());
                  niceness.set(ownNiceness());
                  return env.createSession(IRIS.toString(), opts);
                })) {
      assertThat(session.getNumInputs()).isEqualTo(1);
    }
    assertThat(thread.get()).startsWith("modelkeeper-load-");
    assertThat(niceness.get()).isEqualTo(LoadThreads.NICENESS);
    assertThat(ownNiceness()).as("the caller's own priority is untouched").isZero();
  }

  @Test
  void aSessionWithThreadPoolsOfItsOwn_isCreatedOnTheCallersThread() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
        OrtSession session =
            LoadThreads.createSession(
                "iris/1",
                new SessionSettings(2, 1, false),
                () -> {
                  thread.set(Thread.currentThread());
                  return env.createSession(IRIS.toString(), opts);
                })) {
      assertThat(session.getNumOutputs()).isPositive();
    }
    assertThat(thread.get()).isSameAs(Thread.currentThread());
  }

  @Test
  void whatTheCreationThrows_reachesTheCaller() {
    OrtException failure = new OrtException("no such model");
    assertThatThrownBy(
            () ->
                LoadThreads.createSession(
                    "x/1",
                    ONE_THREAD,
                    () -> {
                      throw failure;
                    }))
        .isSameAs(failure);
  }

  /** The niceness of the calling thread, from field 19 of its {@code /proc/thread-self/stat}. */
  private static int ownNiceness() {
    String stat;
    try {
      stat = Files.readString(Path.of("/proc/thread-self/stat"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Integer.parseInt(fields[16]); // fields after the name start at field 3
  }
}
