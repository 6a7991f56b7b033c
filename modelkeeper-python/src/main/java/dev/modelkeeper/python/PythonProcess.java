package dev.modelkeeper.python;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.onnx.memory.ProcessMemory;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * One instance of a Python model: a child process running {@code modelkeeper_runner.py} over the
 * model's {@code model.py}. Messages go to its stdin and come back on its stdout, each a 4-byte
 * big-endian length and UTF-8 JSON, read on the calling thread (no hand-off); tensors cross through
 * three shared-memory files (in {@code /dev/shm} where there is one): a request's inputs, written
 * here; its outputs, and the inputs of the calls the model makes of other models, written by the
 * child; the answers of those calls, written here. A watchdog thread checks every 100 ms that no
 * call has passed its deadline and stops the child of one that has, which ends the read. What the
 * child writes to stderr (its prints, its {@code pb_utils.Logger} lines, tracebacks) is logged, one
 * event per line, naming the model. One call at a time: {@link PythonModel} hands each instance to
 * one request at a time.
 */
final class PythonProcess implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(PythonProcess.class.getName());
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicLong FILES = new AtomicLong();
  private static final long WATCH_MILLIS = 100;

  /** The processes the watchdog looks after: the live ones. */
  private static final Set<PythonProcess> WATCHED = ConcurrentHashMap.newKeySet();

  static {
    Thread watchdog = new Thread(PythonProcess::watch, "modelkeeper-python-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }

  private final String modelId;
  private final Process process;
  private final OutputStream toChild;
  private final DataInputStream fromChild;

  /** When the call in progress times out ({@link System#nanoTime}), 0 when none is. */
  private volatile long deadline;

  private volatile boolean timedOut;
  private final Path inFile;
  private final Path outFile;
  private final Path blsFile;
  private final FileChannel inChannel;
  private final FileChannel blsChannel;
  private MappedByteBuffer in;
  private MappedByteBuffer out;
  private MappedByteBuffer bls;

  /** The last line the child wrote to stderr, for the message when it dies. */
  private volatile String lastLine = "";

  private PythonProcess(String modelId, Process process, Path inFile, Path outFile, Path blsFile)
      throws IOException {
    this.modelId = modelId;
    this.process = process;
    this.toChild = process.getOutputStream();
    this.inFile = inFile;
    this.outFile = outFile;
    this.blsFile = blsFile;
    this.inChannel = FileChannel.open(inFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
    this.in = inChannel.map(FileChannel.MapMode.READ_WRITE, 0, inChannel.size());
    this.blsChannel = FileChannel.open(blsFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
    this.bls = blsChannel.map(FileChannel.MapMode.READ_WRITE, 0, blsChannel.size());
    this.fromChild = new DataInputStream(process.getInputStream());
    WATCHED.add(this);
    Thread log = new Thread(this::logErrors, "modelkeeper-python-err-" + process.pid());
    log.setDaemon(true);
    log.start();
  }

  /**
   * Starts {@code python} on the runner for {@code modelPy}, in its version folder.
   *
   * @throws IOException when the interpreter cannot be started
   */
  static PythonProcess start(String python, Path runtime, Path modelPy, String modelId)
      throws IOException {
    Path dir = sharedMemoryDir();
    String stem = "modelkeeper-" + ProcessHandle.current().pid() + "-" + FILES.incrementAndGet();
    Path inFile = dir.resolve(stem + "-in");
    Path outFile = dir.resolve(stem + "-out");
    Path blsFile = dir.resolve(stem + "-bls");
    for (Path file : List.of(inFile, blsFile)) {
      try (FileChannel c =
          FileChannel.open(
              file,
              StandardOpenOption.CREATE_NEW,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE)) {
        c.write(ByteBuffer.allocate(1), (1 << 16) - 1);
      }
    }
    Files.write(outFile, new byte[0]);
    ProcessBuilder pb =
        new ProcessBuilder(
                python,
                "-u",
                runtime.resolve("modelkeeper_runner.py").toString(),
                modelPy.toString())
            .directory(modelPy.getParent().toFile());
    String path = pb.environment().get("PYTHONPATH");
    pb.environment()
        .put("PYTHONPATH", runtime + (path == null || path.isEmpty() ? "" : ":" + path));
    pb.environment().put("PYTHONUNBUFFERED", "1");
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      for (Path file : List.of(inFile, outFile, blsFile)) {
        Files.deleteIfExists(file);
      }
      throw e;
    }
    return new PythonProcess(modelId, p, inFile, outFile, blsFile);
  }

  private static Path sharedMemoryDir() {
    Path shm = Path.of("/dev/shm");
    return Files.isDirectory(shm) && Files.isWritable(shm)
        ? shm
        : Path.of(System.getProperty("java.io.tmpdir"));
  }

  long pid() {
    return process.pid();
  }

  /** The child's resident memory; -1 when unknown. */
  long residentBytes() {
    return ProcessMemory.residentBytes(process.pid());
  }

  boolean alive() {
    return process.isAlive();
  }

  /** The shared-memory file inputs go to. */
  Path inputFile() {
    return inFile;
  }

  /** The shared-memory file outputs come from. */
  Path outputFile() {
    return outFile;
  }

  /** The shared-memory file the answers of the model's calls of other models go to. */
  Path callFile() {
    return blsFile;
  }

  /** The input region, at least {@code bytes} long; valid until the next call of this method. */
  ByteBuffer inputs(long bytes) throws IOException {
    in = grown(inChannel, in, bytes);
    return in.duplicate().order(ByteOrder.LITTLE_ENDIAN).clear();
  }

  /** The region of call answers, at least {@code bytes} long, as {@link #inputs}. */
  ByteBuffer callAnswers(long bytes) throws IOException {
    bls = grown(blsChannel, bls, bytes);
    return bls.duplicate().order(ByteOrder.LITTLE_ENDIAN).clear();
  }

  /** The size of the region of call answers, for the child to map. */
  long callAnswersSize() {
    return bls.capacity();
  }

  private static MappedByteBuffer grown(FileChannel c, MappedByteBuffer m, long bytes)
      throws IOException {
    if (m.capacity() >= bytes) {
      return m;
    }
    long size = Math.max(bytes, 2L * m.capacity());
    c.write(ByteBuffer.allocate(1), size - 1);
    return c.map(FileChannel.MapMode.READ_WRITE, 0, size);
  }

  /** The output region the child said is {@code size} bytes long. */
  ByteBuffer outputs(long size) throws IOException {
    if (out == null || out.capacity() != size) {
      try (FileChannel c = FileChannel.open(outFile, StandardOpenOption.READ)) {
        out = c.map(FileChannel.MapMode.READ_ONLY, 0, Math.min(size, c.size()));
      }
    }
    return out.duplicate().order(ByteOrder.LITTLE_ENDIAN).clear();
  }

  /**
   * Sends {@code message} and waits for the answer.
   *
   * @throws Failure when the child exits or does not answer within {@code timeout} (it is then
   *     stopped)
   */
  JsonNode call(ObjectNode message, Duration timeout) throws Failure {
    return call(message, timeout, null);
  }

  /**
   * As {@link #call(ObjectNode, Duration)}; messages the child sends meanwhile that call another
   * model ({@code op: infer}) are answered with what {@code calls} returns, and each answer starts
   * the timeout again.
   */
  JsonNode call(ObjectNode message, Duration timeout, Function<JsonNode, ObjectNode> calls)
      throws Failure {
    send(message);
    while (true) {
      JsonNode answer = await(timeout);
      if (calls != null && answer.path("op").asText().equals("infer")) {
        send(calls.apply(answer));
        continue;
      }
      return answer;
    }
  }

  private void send(ObjectNode message) throws Failure {
    byte[] body;
    try {
      body = JSON.writeValueAsBytes(message);
      byte[] head = ByteBuffer.allocate(4).putInt(body.length).array();
      toChild.write(head);
      toChild.write(body);
      toChild.flush();
    } catch (IOException e) {
      throw exited();
    }
  }

  /**
   * The child's next message, read on the calling thread (no hand-off); the watchdog stops the
   * child when it takes longer than {@code timeout}, which ends the read.
   */
  private JsonNode await(Duration timeout) throws Failure {
    deadline = System.nanoTime() + timeout.toNanos();
    try {
      int n = fromChild.readInt();
      byte[] body = new byte[n];
      fromChild.readFully(body);
      return JSON.readTree(body);
    } catch (IOException e) {
      if (timedOut) {
        throw new Failure(
            "model '"
                + modelId
                + "' did not answer within "
                + timeout.toSeconds()
                + " s; its process was stopped and starts again at the next request");
      }
      throw exited();
    } finally {
      deadline = 0;
    }
  }

  /** Stops every child that has not answered by its deadline; checked every 100 ms. */
  private static void watch() {
    while (true) {
      long now = System.nanoTime();
      for (PythonProcess p : WATCHED) {
        long d = p.deadline;
        if (d != 0 && now - d > 0) {
          p.timedOut = true;
          p.kill();
        }
      }
      try {
        TimeUnit.MILLISECONDS.sleep(WATCH_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private Failure exited() {
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    String code = process.isAlive() ? "still running" : "exit code " + process.exitValue();
    String last = lastLine;
    return new Failure(
        "the process of model '"
            + modelId
            + "' exited ("
            + code
            + ")"
            + (last.isEmpty() ? "" : "; its last words: " + last)
            + "; it starts again at the next request");
  }

  private void logErrors() {
    InputStream err = process.getErrorStream();
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(err, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (!line.isBlank()) {
          if (!line.startsWith("VERBOSE ")) {
            lastLine = line.strip();
          }
          LOG.log(levelOf(line), "model ''{0}'': {1}", modelId, line);
        }
      }
    } catch (IOException e) {
      // the child is gone
    }
  }

  private static Level levelOf(String line) {
    for (Level l : List.of(Level.ERROR, Level.WARNING)) {
      if (line.startsWith(l.getName() + " ")) {
        return l;
      }
    }
    return line.startsWith("VERBOSE ") ? Level.DEBUG : Level.INFO;
  }

  /** Stops the child at once. */
  void kill() {
    process.destroyForcibly();
  }

  /**
   * Asks the child to finalize and exit, waits up to {@code timeout}, then kills it; removes the
   * shared-memory files.
   */
  void stop(Duration timeout) {
    try {
      if (process.isAlive()) {
        ObjectNode m = JSON.createObjectNode().put("op", "finalize");
        try {
          call(m, timeout);
        } catch (Failure e) {
          LOG.log(Level.WARNING, e.getMessage());
        }
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    } finally {
      close();
    }
  }

  @Override
  public void close() {
    WATCHED.remove(this);
    process.destroyForcibly();
    try {
      inChannel.close();
      blsChannel.close();
      for (Path file : List.of(inFile, outFile, blsFile)) {
        Files.deleteIfExists(file);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ObjectMapper json() {
    return JSON;
  }

  /** A call the child did not answer: it exited, or it was stopped. */
  static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    Failure(String message) {
      super(message, null, false, false);
    }
  }
}
