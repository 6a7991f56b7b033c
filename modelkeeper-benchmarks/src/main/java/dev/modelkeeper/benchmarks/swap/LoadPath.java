package dev.modelkeeper.benchmarks.swap;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.NativeHeap;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.onnx.memory.MemoryCosts;
import dev.modelkeeper.onnx.memory.MemoryMeter;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where the time of one model load goes, in one JVM, for the load path of the server jar on the
 * class path: ONNX Runtime's bare session creation (its default options) against ModelKeeper's
 * {@link OnnxModel#load} on the same file, and a step-by-step replica of the load path of commit
 * 5b33505 (native-heap trim, memory probe, session, trim, charge, graph inputs, metadata), each
 * step timed. Cycles interleave the variants and the models; after every close the program waits
 * {@value #QUIET_MILLIS} ms so that the trim a close schedules runs between loads, as on an idle
 * server.
 *
 * <p>Usage: {@code LoadPath [--cycles N] [--replica] [--optimized-cache DIR] name=model.onnx...}.
 * Run it against the jar under test first on the class path: {@code java -cp
 * modelkeeper.jar:benchmarks-classes dev.modelkeeper.benchmarks.swap.LoadPath ...}. Prints one
 * Markdown table (median and p90 per step, in ms) and a CSV of every sample. Not thread-safe; a
 * program.
 */
public final class LoadPath {

  static final long QUIET_MILLIS = 300;

  private final Map<String, List<Double>> samples = new LinkedHashMap<>();

  private LoadPath() {}

  public static void main(String[] args) throws Exception {
    int cycles = 20;
    boolean replica = false;
    Path optimizedCache = null;
    Map<String, Path> models = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--cycles" -> cycles = Integer.parseInt(args[++i]);
        case "--replica" -> replica = true;
        case "--optimized-cache" -> optimizedCache = Path.of(args[++i]);
        default -> {
          String[] kv = args[i].split("=", 2);
          models.put(kv[0], Path.of(kv[1]));
        }
      }
    }
    OnnxRuntimeState.ensureStarted();
    NativeHeap.trim(); // the JMX server behind the trim starts once, outside any measured load
    LoadPath bench = new LoadPath();
    List<Variant> variants = new ArrayList<>();
    variants.add(bench::bare);
    OnnxModelOptions plain = OnnxModelOptions.defaults();
    variants.add(
        (name, file, record) -> bench.modelKeeper("OnnxModel.load", name, file, plain, record));
    if (optimizedCache != null) {
      OnnxModelOptions cached = PreOptimized.options(optimizedCache);
      variants.add(
          (name, file, record) ->
              bench.modelKeeper("OnnxModel.load, pre-optimized", name, file, cached, record));
    }
    if (replica) {
      variants.add(bench::replica);
    }
    // one unmeasured round: class loading, compilation, the files' first reads and the forms'
    // builds are not a load's
    for (Map.Entry<String, Path> m : models.entrySet()) {
      for (Variant v : variants) {
        v.run(m.getKey(), m.getValue(), false);
      }
    }
    for (int c = 0; c < cycles; c++) {
      for (Map.Entry<String, Path> m : models.entrySet()) {
        // the order of the variants rotates per cycle: none always follows another's close
        for (int k = 0; k < variants.size(); k++) {
          variants.get((k + c) % variants.size()).run(m.getKey(), m.getValue(), true);
        }
      }
    }
    bench.print();
  }

  /** One way to load a model, timed when {@code record}. */
  @FunctionalInterface
  interface Variant {
    void run(String name, Path file, boolean record) throws Exception;
  }

  /** ONNX Runtime alone: a session with its default options on the file, then closed. */
  private void bare(String name, Path file, boolean record) throws Exception {
    OrtEnvironment env = OnnxRuntimeState.environment();
    long gc = gcMillis();
    long t0 = System.nanoTime();
    try (OrtSession.SessionOptions o = new OrtSession.SessionOptions();
        OrtSession s = env.createSession(file.toString(), o)) {
      long t1 = System.nanoTime();
      if (record) {
        add(name, "bare session", t1 - t0);
        add(name, "bare: GC during it", (gcMillis() - gc) * 1_000_000);
      }
    }
    quiet();
  }

  /** The server's load of the file, then its close, as the jar on the class path does them. */
  private void modelKeeper(
      String label, String name, Path file, OnnxModelOptions options, boolean record)
      throws Exception {
    long gc = gcMillis();
    long t0 = System.nanoTime();
    OnnxModel model = OnnxModel.load(file, name, "1", ModelConfig.EMPTY, options);
    long t1 = System.nanoTime();
    long gcDuring = gcMillis() - gc;
    model.clearCache();
    long t2 = System.nanoTime();
    if (record) {
      add(name, label, t1 - t0);
      add(name, label + ": GC during it", gcDuring * 1_000_000);
      add(name, label + ": clearCache", t2 - t1);
    }
    quiet();
  }

  /** The load path of 5b33505 step by step, each step timed. */
  private void replica(String name, Path file, boolean record) throws Exception {
    OrtEnvironment env = OnnxRuntimeState.environment();
    long size = Files.size(file);
    boolean small = size < MemoryCost.SMALL_MODEL_BYTES;
    long t0 = System.nanoTime();
    OrtSession.SessionOptions opts = Variants.serverSessionOptions(name, small);
    long t1 = System.nanoTime();
    if (!small) {
      NativeHeap.trim();
    }
    long t2 = System.nanoTime();
    MemoryMeter.Probe probe = MemoryMeter.startLoad();
    long t3 = System.nanoTime();
    OrtSession session = env.createSession(file.toString(), opts);
    long t4 = System.nanoTime();
    if (!small) {
      probe.trimHere(NativeHeap::trim);
    }
    long t5 = System.nanoTime();
    MemoryMeter.Reading reading = probe.end();
    if (reading.clean()) {
      COSTS.recordLoad(name, size, reading.peakDelta(), reading.afterDelta());
    }
    long t6 = System.nanoTime();
    graphInputs(file);
    long t7 = System.nanoTime();
    session.getInputInfo();
    session.getOutputInfo();
    long t8 = System.nanoTime();
    session.close();
    opts.close();
    if (!small) {
      NativeHeap.requestTrim();
    }
    if (record) {
      add(name, "r: session options", t1 - t0);
      add(name, "r: trim before", t2 - t1);
      add(name, "r: probe open", t3 - t2);
      add(name, "r: session (probe open)", t4 - t3);
      add(name, "r: trim after", t5 - t4);
      add(name, "r: probe end + charge", t6 - t5);
      add(name, "r: graph inputs", t7 - t6);
      add(name, "r: metadata", t8 - t7);
      add(name, "r: total", t8 - t0);
    }
    quiet();
    // the parts of a session: reading the file, and a session with graph optimizations off
    long r0 = System.nanoTime();
    readFile(file);
    long r1 = System.nanoTime();
    try (OrtSession.SessionOptions o = Variants.serverSessionOptions(name, small)) {
      o.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.NO_OPT);
      long r2 = System.nanoTime();
      try (OrtSession s = env.createSession(file.toString(), o)) {
        long r3 = System.nanoTime();
        if (record) {
          add(name, "p: read the file (page cache)", r1 - r0);
          add(name, "p: session, optimizations off", r3 - r2);
        }
      }
    }
    if (!small) {
      NativeHeap.requestTrim();
    }
    quiet();
  }

  private static ByteBuffer readBuffer = ByteBuffer.allocateDirect(0);

  /**
   * Reads {@code file} from the page cache into memory already touched (one buffer, grown as
   * needed): the copy alone, not the first touch of fresh pages, which the runtime's own session
   * time includes.
   */
  private static void readFile(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file)) {
      if (readBuffer.capacity() < ch.size()) {
        readBuffer = ByteBuffer.allocateDirect((int) ch.size());
      }
      ByteBuffer b = readBuffer.clear().limit((int) ch.size());
      while (b.hasRemaining() && ch.read(b) >= 0) {
        // reads until full
      }
    }
  }

  private static final MemoryCosts COSTS = MemoryCosts.inMemory();

  private static Method graphInputsRead;

  /** {@code GraphInputs.read(file)}, package-private in the onnx module. */
  private static void graphInputs(Path file) throws Exception {
    if (graphInputsRead == null) {
      Class<?> c = Class.forName("dev.modelkeeper.onnx.GraphInputs");
      graphInputsRead = c.getDeclaredMethod("read", Path.class);
      graphInputsRead.setAccessible(true);
    }
    graphInputsRead.invoke(null, file);
  }

  private static long gcMillis() {
    long sum = 0;
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      sum += Math.max(0, b.getCollectionTime());
    }
    return sum;
  }

  private static void quiet() throws InterruptedException {
    Thread.sleep(QUIET_MILLIS); // a benchmark's pause: lets the trim a close scheduled run
  }

  private void add(String model, String step, long nanos) {
    samples.computeIfAbsent(model + "\t" + step, k -> new ArrayList<>()).add(nanos / 1e6);
  }

  private void print() {
    System.out.println("| model | step | median ms | p90 ms | n |");
    System.out.println("|---|---|---:|---:|---:|");
    StringBuilder csv = new StringBuilder("model,step,ms\n");
    for (Map.Entry<String, List<Double>> e : samples.entrySet()) {
      String[] key = e.getKey().split("\t");
      double[] v = e.getValue().stream().mapToDouble(Double::doubleValue).toArray();
      for (double x : v) {
        csv.append(key[0]).append(',').append(key[1]).append(',').append(x).append('\n');
      }
      Arrays.sort(v);
      System.out.printf(
          Locale.ROOT,
          "| %s | %s | %.1f | %.1f | %d |%n",
          key[0],
          key[1],
          quantile(v, 0.5),
          quantile(v, 0.9),
          v.length);
    }
    System.out.println();
    System.out.print(csv);
  }

  /** The value at quantile {@code q} of sorted {@code v}, nearest rank. */
  static double quantile(double[] v, double q) {
    return v[Math.min(v.length - 1, (int) Math.ceil(q * v.length) - 1)];
  }
}
