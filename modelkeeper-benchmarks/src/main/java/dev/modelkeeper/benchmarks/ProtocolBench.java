package dev.modelkeeper.benchmarks;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import com.google.protobuf.ByteString;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.grpc.ServerLiveRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.EventExecutor;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The protocol benchmark: one in-process server over loopback, the demo models {@code iris} and
 * {@code mlp-medium}, closed-loop clients (1, 8, 64) over JSON REST, binary REST (the binary tensor
 * data extension) and gRPC (raw contents), in interleaved rounds, next to the in-process floor
 * ({@code OrtSession.run} on the same input, measured in the same run). Writes {@code
 * docs/bench/protocols.md} and the same section into {@code docs/BENCHMARKS.md} (see {@link
 * Report#putSection}). Not thread-safe; it is a program's entry point.
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.modelkeeper.benchmarks.ProtocolBench [--docs DIR]
 * [--rounds N] [--seconds S]}.
 */
public final class ProtocolBench {

  private static final Map<String, Integer> WIDTH = Map.of("iris", 4, "mlp-medium", 64);

  /** Rows of the medium request: 16 KiB of FP32 in, 4 KiB out. */
  private static final int MEDIUM_ROWS = 64;

  /**
   * What the cells send: one row of iris and of mlp-medium (the transport's cost dominates), and a
   * medium request of {@value #MEDIUM_ROWS} mlp-medium rows, where encoding the tensors is most of
   * the work.
   */
  private static final List<Workload> WORKLOADS =
      List.of(
          new Workload("iris", 1),
          new Workload("mlp-medium", 1),
          new Workload("mlp-medium", MEDIUM_ROWS));

  private static final Workload NONE = new Workload("none", 0);
  private static final List<Integer> CLIENTS = List.of(1, 8, 64);

  /**
   * Event-loop threads of the gRPC clients, one per processor: the channels are spread over them,
   * so the clients can use both cores, as the REST clients' threads can.
   */
  private static final int CLIENT_LOOP_THREADS = Runtime.getRuntime().availableProcessors();

  /** Distinct request bodies per workload; each client sends them in turn. */
  private static final int BODIES = 8;

  /** JIT compilation in one warm-up round below which the compiler counts as quiet. */
  private static final long QUIET_COMPILE_MILLIS = 200;

  private static final Duration WARM_UP_LIMIT = Duration.ofMinutes(2);
  private static final List<String> PROTOCOLS = List.of("JSON REST", "binary REST", "gRPC");

  /** Round trips that run no model: what each transport costs by itself, at one client. */
  private static final List<String> NO_MODEL =
      List.of("REST GET /v2/health/live", "gRPC ServerLive");

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** The cross-check's workloads and client counts: the throughput cells of mlp-medium. */
  private static final List<Workload> CROSS_WORKLOADS =
      List.of(new Workload("mlp-medium", 1), new Workload("mlp-medium", MEDIUM_ROWS));

  private static final List<Integer> CROSS_CLIENTS = List.of(8, 64);

  private ProtocolBench() {}

  /** CPU time of this whole process (every thread, the JIT compiler's and the collector's too). */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /**
   * A model and the rows each request carries.
   *
   * @param model the model's name ({@code none} for round trips that run no model)
   * @param rows rows per request
   */
  private record Workload(String model, int rows) {
    String label() {
      return rows == 1 ? model : model + " (" + rows + " rows)";
    }

    int width() {
      return WIDTH.getOrDefault(model, 0);
    }

    String key() {
      return model + "x" + rows;
    }
  }

  /**
   * A workload's requests, encoded once for every protocol before any cell runs, as load generators
   * such as wrk and Triton's perf_analyzer send prepared bodies: the clients' CPU is then their
   * I/O, the same for JSON and binary, and the server does all the parsing.
   */
  private static final class Payloads {
    final Workload workload;
    final float[][] data = new float[BODIES][];
    final byte[][] json = new byte[BODIES][];
    final byte[][] binary = new byte[BODIES][];

    /** The binary bodies' headers: every body of a workload has a JSON part of one length. */
    final Map<String, String> binaryHeaders;

    final ModelInferRequest[] grpc = new ModelInferRequest[BODIES];

    Payloads(Workload w) {
      this.workload = w;
      byte[] header = binaryHeader(w);
      this.binaryHeaders =
          Map.of(
              "Content-Type",
              "application/octet-stream",
              "Inference-Header-Content-Length",
              Integer.toString(header.length));
      Random random = new Random(w.key().hashCode());
      for (int b = 0; b < BODIES; b++) {
        float[] d = new float[w.rows() * w.width()];
        for (int i = 0; i < d.length; i++) {
          d[i] = random.nextFloat() * 8;
        }
        data[b] = d;
        json[b] = json(w, d);
        ByteBuffer raw = ByteBuffer.allocate(d.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : d) {
          raw.putFloat(f);
        }
        binary[b] =
            ByteBuffer.allocate(header.length + raw.capacity())
                .put(header)
                .put(raw.array())
                .array();
        grpc[b] =
            ModelInferRequest.newBuilder()
                .setModelName(w.model())
                .addInputs(
                    ModelInferRequest.InferInputTensor.newBuilder()
                        .setName("input")
                        .setDatatype("FP32")
                        .addShape(w.rows())
                        .addShape(w.width()))
                .addRawInputContents(ByteString.copyFrom(raw.array()))
                .build();
      }
    }

    /** The JSON part of a binary body of {@code w}, the same for each of its bodies. */
    private static byte[] binaryHeader(Workload w) {
      return ("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":["
              + w.rows()
              + ","
              + w.width()
              + "],\"parameters\":{\"binary_data_size\":"
              + w.rows() * w.width() * 4
              + "}}],\"parameters\":{\"binary_data_output\":true}}")
          .getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] json(Workload w, float[] d) {
      StringBuilder sb = new StringBuilder(64 + d.length * 12);
      sb.append("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[")
          .append(w.rows())
          .append(',')
          .append(w.width())
          .append("],\"data\":[");
      for (int i = 0; i < d.length; i++) {
        if (i > 0) {
          sb.append(',');
        }
        sb.append(d[i]);
      }
      sb.append("]}]}");
      return sb.toString().getBytes(StandardCharsets.UTF_8);
    }
  }

  /** One transport's blocking client for one calling thread; not thread-safe. */
  private interface Caller extends AutoCloseable {
    /** Sends request {@code body} (an index below {@link #BODIES}) and checks its answer. */
    void call(int body) throws Exception;

    @Override
    default void close() throws IOException {}
  }

  /** One transport: opens a {@link Caller} of a workload per client thread; thread-safe. */
  private interface Client {
    Caller open(Payloads payloads);
  }

  /** A call that completes on the client's transport thread, which then starts the next one. */
  @FunctionalInterface
  private interface AsyncCaller {
    /**
     * Starts one call of client {@code client} (its own connection); {@code done} gets null when it
     * succeeded, else its failure.
     */
    void call(Payloads payloads, int client, int body, Consumer<Throwable> done);
  }

  /** A closed-loop load of one protocol: {@code clients} callers for {@code seconds}. */
  @FunctionalInterface
  private interface Load {
    Cell run(Payloads payloads, int clients, double seconds) throws InterruptedException;
  }

  /** Latencies and count of one cell (model, protocol, clients) over every round. */
  private static final class Cell {
    final List<long[]> latencies = new ArrayList<>();
    long requests;
    double seconds;

    /** CPU time of this process less its client threads' while the cell ran: the server's. */
    long serverCpuNanos;

    /** CPU time of the client threads while the cell ran. */
    long clientCpuNanos;

    double rate() {
      return requests / seconds;
    }

    /** Server CPU time per request, µs. */
    double serverCpuMicros() {
      return serverCpuNanos / 1e3 / requests;
    }

    /** Processors kept busy by server and clients together, on average. */
    double coresBusy() {
      return (serverCpuNanos + clientCpuNanos) / 1e9 / seconds;
    }

    /** Client CPU time per request, µs. */
    double clientCpuMicros() {
      return clientCpuNanos / 1e3 / requests;
    }

    void add(Cell one) {
      latencies.addAll(one.latencies);
      requests += one.requests;
      seconds += one.seconds;
      serverCpuNanos += one.serverCpuNanos;
      clientCpuNanos += one.clientCpuNanos;
    }

    double percentileMicros(double p) {
      int n = 0;
      for (long[] l : latencies) {
        n += l.length;
      }
      long[] all = new long[n];
      int i = 0;
      for (long[] l : latencies) {
        System.arraycopy(l, 0, all, i, l.length);
        i += l.length;
      }
      Arrays.sort(all);
      return all.length == 0
          ? Double.NaN
          : all[Math.min(all.length - 1, (int) (p * all.length))] / 1e3;
    }
  }

  public static void main(String[] args) throws Exception {
    RunOptions options =
        RunOptions.parse(ProtocolBench.class.getName(), args, 3, 2.0, "scripts/bench-protocols.sh");
    Path docs = options.docs;
    int rounds = options.rounds;
    double seconds = options.seconds;
    String command = options.command;
    Path repo = Files.createTempDirectory("mk-protocol-bench");
    DemoRepository.materialize(repo);
    ServerConfig config =
        ServerConfig.of(new LocalModelRepository(repo))
            .network(n -> n.withHost("127.0.0.1").withPort(0).withGrpcPort(0))
            .withPin(WORKLOADS.stream().map(Workload::model).distinct().toList());
    CpuSample cpuBefore = CpuSample.now();
    Instant started = Instant.now();
    Map<String, double[]> floor = new LinkedHashMap<>();
    Map<String, Cell> cells = new LinkedHashMap<>();
    Map<String, Cell> crossCells = new LinkedHashMap<>();
    String warmUp;
    try (ModelKeeperServer server = ModelKeeperServer.start(config)) {
      if (!server.awaitReady(Duration.ofMinutes(2))) {
        throw new IllegalStateException("the server did not become ready");
      }
      // no client thread hand-offs (see the NOTE): one keep-alive socket per REST client thread,
      // which does its own I/O; gRPC calls complete and start the next on the client's transport
      // thread. That thread is the client's own, as in a client process: by default gRPC's client
      // and server in one JVM share one event-loop group, and a round trip then took 50 or 100 µs
      // depending on whether both ends of the connection landed on the same thread. Every gRPC
      // client has its own channel (its own HTTP/2 connection), as every REST client has its own
      // socket and as separate client processes would
      MultiThreadIoEventLoopGroup clientLoop =
          new MultiThreadIoEventLoopGroup(CLIENT_LOOP_THREADS, NioIoHandler.newFactory());
      int maxClients = CLIENTS.stream().mapToInt(Integer::intValue).max().orElseThrow();
      List<ManagedChannel> channels = new ArrayList<>();
      for (int c = 0; c < maxClients; c++) {
        channels.add(
            NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
                .eventLoopGroup(clientLoop)
                .channelType(NioSocketChannel.class)
                .usePlaintext()
                .directExecutor()
                .build());
      }
      try {
        int port = server.port();
        Map<Workload, Payloads> payloads = new LinkedHashMap<>();
        for (Workload w : WORKLOADS) {
          payloads.put(w, new Payloads(w));
        }
        Payloads none = new Payloads(NONE);
        Map<String, Load> clients = new LinkedHashMap<>();
        clients.put("JSON REST", (p, n, s) -> run(json(port), p, n, s));
        clients.put("binary REST", (p, n, s) -> run(binary(port), p, n, s));
        // the chains run on the client loop's threads: their CPU time is the gRPC client's
        List<Long> loopThreads = new ArrayList<>();
        for (EventExecutor e : clientLoop) {
          loopThreads.add(e.submit(() -> Thread.currentThread().getId()).get(10, TimeUnit.SECONDS));
        }
        LongSupplier grpcClientCpu =
            () -> loopThreads.stream().mapToLong(THREADS::getThreadCpuTime).sum();
        clients.put("gRPC", (p, n, s) -> runChained(grpc(channels), grpcClientCpu, p, n, s));
        Map<String, Load> noModel = new LinkedHashMap<>();
        noModel.put(NO_MODEL.get(0), (p, n, s) -> run(live(port), p, n, s));
        noModel.put(
            NO_MODEL.get(1), (p, n, s) -> runChained(live(channels), grpcClientCpu, p, n, s));
        // warm-up: every path, in rounds until the JIT compiler is quiet; compiling gRPC's and
        // Netty's code takes tens of seconds of a core here, and a cell measured meanwhile would
        // count the compiler's work against its protocol
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long warmStart = System.nanoTime();
        long compiledMillis;
        int warmRounds = 0;
        do {
          long before = jit.getTotalCompilationTime();
          for (Payloads p : payloads.values()) {
            for (Load c : clients.values()) {
              c.run(p, 8, 1.0);
            }
          }
          for (Load c : noModel.values()) {
            c.run(none, 1, 1.0);
          }
          compiledMillis = jit.getTotalCompilationTime() - before;
          warmRounds++;
          System.out.printf(
              Locale.ROOT,
              "warm-up round %d: %d ms of JIT compilation%n",
              warmRounds,
              compiledMillis);
        } while (compiledMillis > QUIET_COMPILE_MILLIS
            && System.nanoTime() - warmStart < WARM_UP_LIMIT.toNanos());
        warmUp =
            String.format(
                Locale.ROOT,
                "Warm-up: %d rounds over every path and workload (%d s), until a round of %d s"
                    + " spent %d ms compiling (quiet: at most %d ms, or %d s at most).",
                warmRounds,
                Duration.ofNanos(System.nanoTime() - warmStart).toSeconds(),
                payloads.size() * clients.size() + noModel.size(),
                compiledMillis,
                QUIET_COMPILE_MILLIS,
                WARM_UP_LIMIT.toSeconds());
        for (int r = 0; r < rounds; r++) {
          for (Map.Entry<String, Load> e : noModel.entrySet()) {
            Cell cell = cells.computeIfAbsent("none|" + e.getKey() + "|1", k -> new Cell());
            cell.add(e.getValue().run(none, 1, seconds));
          }
          for (Payloads p : payloads.values()) {
            floor.merge(
                p.workload.key(),
                floor(repo, p, seconds),
                (x, y) -> new double[] {x[0] + y[0], Math.min(x[1], y[1]), x[2] + y[2]});
            for (int n : CLIENTS) {
              List<String> order = new ArrayList<>(PROTOCOLS);
              java.util.Collections.rotate(order, r);
              for (String protocol : order) {
                Cell cell =
                    cells.computeIfAbsent(cellKey(p.workload, protocol, n), k -> new Cell());
                Cell one = clients.get(protocol).run(p, n, seconds);
                cell.add(one);
                System.out.printf(
                    Locale.ROOT,
                    "round %d %-22s %-11s %2d clients: %,9.0f req/s%n",
                    r + 1,
                    p.workload.label(),
                    protocol,
                    n,
                    one.rate());
              }
            }
          }
        }
        // the same throughput cells with one load generator, h2load, for every protocol
        H2Load h2load = new H2Load(repo);
        double failedBefore = failedGrpcCalls(port);
        for (int r = 0; r < rounds; r++) {
          for (Workload w : CROSS_WORKLOADS) {
            Payloads p = payloads.get(w);
            for (int n : CROSS_CLIENTS) {
              List<String> order = new ArrayList<>(PROTOCOLS);
              java.util.Collections.rotate(order, r);
              for (String protocol : order) {
                // about as many requests as the in-JVM clients answered in one cell of this run
                long requests =
                    Math.max(
                        2_000, Math.round(cells.get(cellKey(w, protocol, n)).rate() * seconds));
                Cell one = h2load(h2load, server, p, protocol, n, requests);
                crossCells.computeIfAbsent(cellKey(w, protocol, n), k -> new Cell()).add(one);
                System.out.printf(
                    Locale.ROOT,
                    "round %d h2load %-22s %-11s %2d clients: %,9.0f req/s%n",
                    r + 1,
                    w.label(),
                    protocol,
                    n,
                    one.rate());
              }
            }
          }
        }
        double failed = failedGrpcCalls(port) - failedBefore;
        if (failed > 0) {
          throw new IllegalStateException(failed + " gRPC calls of h2load failed");
        }
      } finally {
        for (ManagedChannel c : channels) {
          c.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        clientLoop.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
      }
    }
    double others = CpuSample.now().othersShareSince(cpuBefore);
    String md =
        report(
            cells,
            crossCells,
            floor,
            rounds,
            seconds,
            others,
            command,
            warmUp,
            Duration.between(started, Instant.now()));
    Files.createDirectories(docs.resolve("bench"));
    Files.writeString(docs.resolve("bench").resolve("protocols.md"), md);
    Report.putSection(docs.resolve("BENCHMARKS.md"), md);
    System.out.println(md);
  }

  /** Runs {@code clients} closed-loop callers for {@code seconds}. */
  private static Cell run(Client client, Payloads payloads, int clients, double seconds)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(clients);
    List<long[]> latencies = new ArrayList<>();
    long[] counts = new long[clients];
    long[] clientCpu = new long[clients];
    Throwable[] failure = new Throwable[1];
    List<Thread> threads = new ArrayList<>();
    long cpuBefore = processCpuNanos();
    long start = System.nanoTime();
    for (int t = 0; t < clients; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                long ownCpu = THREADS.getCurrentThreadCpuTime();
                long[] lat = new long[1 << 16];
                int n = 0;
                try (Caller caller = client.open(payloads)) {
                  while (!stop.get()) {
                    long t0 = System.nanoTime();
                    caller.call((id + n) % BODIES);
                    long took = System.nanoTime() - t0;
                    if (n == lat.length) {
                      lat = Arrays.copyOf(lat, n * 2);
                    }
                    lat[n++] = took;
                  }
                } catch (Throwable e) {
                  synchronized (failure) {
                    failure[0] = e;
                  }
                } finally {
                  synchronized (latencies) {
                    latencies.add(Arrays.copyOf(lat, n));
                    counts[id] = n;
                    clientCpu[id] = THREADS.getCurrentThreadCpuTime() - ownCpu;
                  }
                  done.countDown();
                }
              },
              "bench-client-" + t);
      th.setDaemon(true);
      threads.add(th);
      th.start();
    }
    double took = runFor(seconds, start, stop, done);
    synchronized (failure) {
      if (failure[0] != null) {
        throw new IllegalStateException("a client failed", failure[0]);
      }
    }
    Cell cell = new Cell();
    cell.latencies.addAll(latencies);
    for (long c : counts) {
      cell.requests += c;
    }
    cell.seconds = took;
    cell.clientCpuNanos = Arrays.stream(clientCpu).sum();
    cell.serverCpuNanos = processCpuNanos() - cpuBefore - cell.clientCpuNanos;
    return cell;
  }

  /**
   * Lets a load that started at {@code start} (a nanoTime instant) run for {@code seconds}, stops
   * it and waits up to 60 s for its callers to finish; returns how many seconds it ran.
   */
  private static double runFor(double seconds, long start, AtomicBoolean stop, CountDownLatch done)
      throws InterruptedException {
    Thread.sleep((long) (seconds * 1000));
    stop.set(true);
    if (!done.await(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the load's callers did not stop within 60 s");
    }
    return (System.nanoTime() - start) / 1e9;
  }

  /**
   * Runs {@code clients} closed-loop chains of asynchronous calls for {@code seconds}: each chain
   * starts its next call from the completion of the last, on the client's transport thread (as
   * gRPC's own benchmark clients do), so no calling thread is woken per call.
   */
  private static Cell runChained(
      AsyncCaller caller, LongSupplier clientCpu, Payloads payloads, int clients, double seconds)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(clients);
    List<Chain> chains = new ArrayList<>();
    long cpuBefore = processCpuNanos();
    long clientCpuBefore = clientCpu.getAsLong();
    long start = System.nanoTime();
    for (int t = 0; t < clients; t++) {
      Chain chain = new Chain(caller, payloads, t, stop, failure, done);
      chains.add(chain);
      chain.next();
    }
    double took = runFor(seconds, start, stop, done);
    if (failure.get() != null) {
      throw new IllegalStateException("a call failed", failure.get());
    }
    Cell cell = new Cell();
    for (Chain c : chains) {
      cell.latencies.add(Arrays.copyOf(c.latencies, c.count));
      cell.requests += c.count;
    }
    cell.seconds = took;
    cell.clientCpuNanos = clientCpu.getAsLong() - clientCpuBefore;
    cell.serverCpuNanos = processCpuNanos() - cpuBefore - cell.clientCpuNanos;
    return cell;
  }

  /** One closed-loop client of {@link #runChained}; its calls run one after another. */
  private static final class Chain {
    private final AsyncCaller caller;
    private final Payloads payloads;
    private final int client;
    private final AtomicBoolean stop;
    private final AtomicReference<Throwable> failure;
    private final CountDownLatch done;
    private long[] latencies = new long[1 << 16];
    private int count;
    private long startedAt;

    Chain(
        AsyncCaller caller,
        Payloads payloads,
        int client,
        AtomicBoolean stop,
        AtomicReference<Throwable> failure,
        CountDownLatch done) {
      this.caller = caller;
      this.payloads = payloads;
      this.client = client;
      this.stop = stop;
      this.failure = failure;
      this.done = done;
    }

    void next() {
      startedAt = System.nanoTime();
      caller.call(payloads, client, (client + count) % BODIES, this::completed);
    }

    private void completed(Throwable f) {
      long took = System.nanoTime() - startedAt;
      if (f != null) {
        failure.compareAndSet(null, f);
        done.countDown();
        return;
      }
      if (count == latencies.length) {
        latencies = Arrays.copyOf(latencies, count * 2);
      }
      latencies[count++] = took;
      if (stop.get()) {
        done.countDown();
      } else {
        next();
      }
    }
  }

  /**
   * {@code OrtSession.run} on the workload's inputs for {@code seconds}: {rate, min p50 µs,
   * rounds}.
   */
  private static double[] floor(Path repo, Payloads payloads, double seconds) throws Exception {
    Workload w = payloads.workload;
    OrtEnvironment env = OnnxRuntimeState.environment();
    Path file = repo.resolve(w.model()).resolve("1").resolve("model.onnx");
    try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions()) {
      opts.setIntraOpNumThreads(1);
      try (OrtSession session = env.createSession(file.toString(), opts)) {
        String input = session.getInputNames().iterator().next();
        long[] shape = {w.rows(), w.width()};
        long[] lat = new long[1 << 20];
        int n = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long start = System.nanoTime();
        while (System.nanoTime() < end && n < lat.length) {
          long t0 = System.nanoTime();
          try (OnnxTensor t =
                  OnnxTensor.createTensor(env, FloatBuffer.wrap(payloads.data[n % BODIES]), shape);
              OrtSession.Result r = session.run(Map.of(input, t))) {
            r.get(0);
          }
          lat[n++] = System.nanoTime() - t0;
        }
        double took = (System.nanoTime() - start) / 1e9;
        long[] sorted = Arrays.copyOf(lat, n);
        Arrays.sort(sorted);
        return new double[] {n / took, sorted[n / 2] / 1e3, 1};
      }
    }
  }

  /** A blocking REST caller of {@code port} on loopback. */
  private static BlockingHttpClient http(int port) {
    return new BlockingHttpClient("127.0.0.1", port, Duration.ofSeconds(60));
  }

  private static String inferPath(Payloads payloads) {
    return "/v2/models/" + payloads.workload.model() + "/infer";
  }

  private static Client json(int port) {
    Map<String, String> headers = Map.of("Content-Type", "application/json");
    return payloads -> {
      BlockingHttpClient http = http(port);
      String path = inferPath(payloads);
      return new Caller() {
        @Override
        public void call(int body) throws IOException {
          BlockingHttpClient.Response r = http.post(path, headers, payloads.json[body]);
          check(r.status(), r.body());
          if (r.body().length == 0 || r.body()[0] != '{') {
            throw new IOException("not a JSON body");
          }
        }

        @Override
        public void close() throws IOException {
          http.close();
        }
      };
    };
  }

  private static Client binary(int port) {
    return payloads -> {
      BlockingHttpClient http = http(port);
      String path = inferPath(payloads);
      return new Caller() {
        @Override
        public void call(int body) throws IOException {
          BlockingHttpClient.Response r =
              http.post(path, payloads.binaryHeaders, payloads.binary[body]);
          check(r.status(), r.body());
          String jsonLength = r.header("Inference-Header-Content-Length");
          if (jsonLength == null || Integer.parseInt(jsonLength) >= r.body().length) {
            throw new IOException("no binary outputs after the JSON header");
          }
        }

        @Override
        public void close() throws IOException {
          http.close();
        }
      };
    };
  }

  /** REST's round trip without a model: {@code GET /v2/health/live}. */
  private static Client live(int port) {
    return payloads -> {
      BlockingHttpClient http = http(port);
      return new Caller() {
        @Override
        public void call(int body) throws IOException {
          BlockingHttpClient.Response r = http.get("/v2/health/live");
          check(r.status(), r.body());
        }

        @Override
        public void close() throws IOException {
          http.close();
        }
      };
    };
  }

  /** A gRPC call of one client, started on its own channel with a 60 s deadline. */
  @FunctionalInterface
  private interface GrpcCall {
    void start(
        GRPCInferenceServiceGrpc.GRPCInferenceServiceStub stub,
        Payloads payloads,
        int body,
        Consumer<Throwable> done);
  }

  /** {@code call} over the channel of each client. */
  private static AsyncCaller grpcCaller(List<ManagedChannel> channels, GrpcCall call) {
    List<GRPCInferenceServiceGrpc.GRPCInferenceServiceStub> stubs =
        channels.stream().map(GRPCInferenceServiceGrpc::newStub).toList();
    return (payloads, client, body, done) ->
        call.start(stubs.get(client).withDeadlineAfter(60, TimeUnit.SECONDS), payloads, body, done);
  }

  /** gRPC's round trip without a model: {@code ServerLive}. */
  private static AsyncCaller live(List<ManagedChannel> channels) {
    return grpcCaller(
        channels,
        (stub, payloads, body, done) ->
            stub.serverLive(
                ServerLiveRequest.getDefaultInstance(),
                new Answer<>(done, r -> r.getLive() ? null : "not live")));
  }

  private static AsyncCaller grpc(List<ManagedChannel> channels) {
    return grpcCaller(
        channels,
        (stub, payloads, body, done) ->
            stub.modelInfer(
                payloads.grpc[body],
                new Answer<>(done, r -> r.getRawOutputContentsCount() == 0 ? "no outputs" : null)));
  }

  /** Hands a unary call's outcome to {@code done}: null, or why it failed. */
  private static final class Answer<T> implements StreamObserver<T> {
    private final Consumer<Throwable> done;
    private final Function<T, String> problem;
    private T response;

    Answer(Consumer<Throwable> done, Function<T, String> problem) {
      this.done = done;
      this.problem = problem;
    }

    @Override
    public void onNext(T value) {
      response = value;
    }

    @Override
    public void onError(Throwable t) {
      done.accept(t);
    }

    @Override
    public void onCompleted() {
      String p = response == null ? "no response" : problem.apply(response);
      done.accept(p == null ? null : new IllegalStateException(p));
    }
  }

  private static void check(int status, byte[] body) throws IOException {
    if (status != 200) {
      throw new IOException("HTTP " + status + ": " + new String(body, StandardCharsets.UTF_8));
    }
  }

  /** One h2load cell: its process's CPU is the client's, all of this process's the server's. */
  private static Cell h2load(
      H2Load h2load,
      ModelKeeperServer server,
      Payloads p,
      String protocol,
      int clients,
      long requests)
      throws IOException, InterruptedException {
    Duration timeout = Duration.ofSeconds(120);
    String rest = "http://127.0.0.1:" + server.port() + inferPath(p);
    long cpuBefore = processCpuNanos();
    H2Load.Result r =
        switch (protocol) {
          case "JSON REST" ->
              h2load.run(
                  rest,
                  true,
                  Map.of("Content-Type", "application/json"),
                  p.json[0],
                  clients,
                  requests,
                  timeout);
          case "binary REST" ->
              h2load.run(rest, true, p.binaryHeaders, p.binary[0], clients, requests, timeout);
          case "gRPC" ->
              h2load.run(
                  "http://127.0.0.1:"
                      + server.grpcPort()
                      + "/"
                      + GRPCInferenceServiceGrpc.getModelInferMethod().getFullMethodName(),
                  false,
                  Map.of("Content-Type", "application/grpc", "TE", "trailers"),
                  grpcFrame(p.grpc[0]),
                  clients,
                  requests,
                  timeout);
          default -> throw new IllegalArgumentException(protocol);
        };
    Cell cell = new Cell();
    cell.serverCpuNanos = processCpuNanos() - cpuBefore;
    cell.clientCpuNanos = r.cpuNanos();
    cell.requests = r.requests();
    cell.seconds = r.seconds();
    cell.latencies.add(r.latencyNanos());
    return cell;
  }

  /** A gRPC message as it travels: not compressed, its length (4 bytes, big-endian), itself. */
  private static byte[] grpcFrame(ModelInferRequest request) {
    byte[] message = request.toByteArray();
    return ByteBuffer.allocate(5 + message.length)
        .put((byte) 0)
        .putInt(message.length)
        .put(message)
        .array();
  }

  /** gRPC calls the server counted as ended with a status other than OK, so far. */
  private static double failedGrpcCalls(int port) throws IOException {
    double failed = 0;
    try (BlockingHttpClient http = http(port)) {
      BlockingHttpClient.Response r = http.get("/metrics");
      check(r.status(), r.body());
      for (String line : new String(r.body(), StandardCharsets.UTF_8).split("\n")) {
        if (line.startsWith("modelkeeper_grpc_requests_total{") && !line.contains("code=\"OK\"")) {
          failed += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
    }
    return failed;
  }

  private static final String TABLE_HEAD =
      "| model | clients | protocol | req/s | p50 µs | p99 µs | vs JSON REST | server CPU µs/req"
          + " | server CPU vs JSON REST | client CPU µs/req |\n"
          + "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";

  /** A row of {@link #TABLE_HEAD}: the cell of {@code w}, {@code protocol} and {@code clients}. */
  private static void row(
      StringBuilder md, Map<String, Cell> cells, Workload w, String protocol, int clients) {
    Cell json = cells.get(cellKey(w, "JSON REST", clients));
    Cell c = cells.get(cellKey(w, protocol, clients));
    md.append(
        String.format(
            Locale.ROOT,
            "| %s | %d | %s | %,.0f | %.0f | %.0f | %.2fx | %.0f | %.2fx | %.0f |%n",
            w.label(),
            clients,
            protocol,
            c.rate(),
            c.percentileMicros(0.50),
            c.percentileMicros(0.99),
            c.rate() / json.rate(),
            c.serverCpuMicros(),
            json.serverCpuMicros() / c.serverCpuMicros(),
            c.clientCpuMicros()));
  }

  private static String cellKey(Workload w, String protocol, int clients) {
    return w.key() + "|" + protocol + "|" + clients;
  }

  private static String report(
      Map<String, Cell> cells,
      Map<String, Cell> crossCells,
      Map<String, double[]> floor,
      int rounds,
      double seconds,
      double others,
      String command,
      String warmUp,
      Duration took) {
    StringBuilder md = new StringBuilder();
    md.append("## Protocols\n\n");
    md.append(
            "JSON REST, binary REST (binary tensor data extension) and gRPC (raw contents) against ")
        .append("one in-process server over loopback, closed-loop clients sending one row of iris")
        .append(" or mlp-medium per request, or a medium request of ")
        .append(MEDIUM_ROWS)
        .append(" mlp-medium rows, next to the in-process floor: `OrtSession.run` on the same ")
        .append("input in the same run (one thread). ")
        .append(
            String.format(
                Locale.ROOT,
                "%d interleaved rounds of %.1f s per cell (protocol ",
                rounds,
                seconds))
        .append("order rotated each round). ")
        .append(warmUp)
        .append("\n\n");
    md.append("- Date: ")
        .append(
            DateTimeFormatter.ISO_LOCAL_DATE_TIME.withZone(ZoneOffset.UTC).format(Instant.now()))
        .append(" UTC; took ")
        .append(took.toSeconds())
        .append(" s\n");
    md.append("- Machine: ").append(Machine.summary()).append('\n');
    md.append(
        String.format(
            Locale.ROOT,
            "- CPU used by other processes during the run: %.0f %% (a shared machine: figures are"
                + " comparable within this run only)%n",
            others * 100));
    md.append("- Command: `").append(command).append("`\n\n");
    md.append(TABLE_HEAD);
    for (Workload w : WORKLOADS) {
      double[] f = floor.get(w.key());
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | 1 | in-process floor (OrtSession.run) | %,.0f | %.1f | | | | | |%n",
              w.label(),
              f[0] / f[2],
              f[1]));
      for (int n : CLIENTS) {
        for (String protocol : PROTOCOLS) {
          row(md, cells, w, protocol, n);
        }
      }
    }
    md.append("\nRound trips that run no model (what the transport alone costs), 1 client:\n\n");
    md.append(
        "| round trip | req/s | p50 µs | p99 µs | server CPU µs/req |\n|---|---:|---:|---:|---:|\n");
    for (String name : NO_MODEL) {
      Cell c = cells.get("none|" + name + "|1");
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %,.0f | %.0f | %.0f | %.0f |%n",
              name,
              c.rate(),
              c.percentileMicros(0.50),
              c.percentileMicros(0.99),
              c.serverCpuMicros()));
    }
    md.append(
        "\nThe same throughput cells with one load generator for every protocol, nghttp2's"
            + " `h2load` (its own process, one thread, `-m 1`: each connection sends one request"
            + " at a time; `--h1` for REST; as many requests per cell as the in-JVM clients"
            + " answered in one of theirs), same run, same server, rounds interleaved as above:\n\n");
    md.append(TABLE_HEAD);
    for (Workload w : CROSS_WORKLOADS) {
      for (int n : CROSS_CLIENTS) {
        for (String protocol : PROTOCOLS) {
          row(md, crossCells, w, protocol, n);
        }
      }
    }
    md.append("\nTargets:\n\n");
    for (Workload w : WORKLOADS) {
      if (!w.model().equals("mlp-medium")) {
        continue;
      }
      Cell json8 = cells.get(cellKey(w, "JSON REST", 8));
      for (String protocol : List.of("binary REST", "gRPC")) {
        Cell c = cells.get(cellKey(w, protocol, 8));
        double ratio = c.rate() / json8.rate();
        md.append(
            String.format(
                Locale.ROOT,
                "- %s on %s at 8 clients: %.2fx JSON REST throughput (target ≥ 1.5x): %s."
                    + " Each request took %.2fx less server CPU than over JSON REST; server and"
                    + " clients kept %.1f of the %d processors busy (JSON REST: %.1f)%n",
                protocol,
                w.label(),
                ratio,
                ratio >= 1.5 ? "met" : "NOT met",
                json8.serverCpuMicros() / c.serverCpuMicros(),
                c.coresBusy(),
                Runtime.getRuntime().availableProcessors(),
                json8.coresBusy()));
      }
    }
    for (Workload w : CROSS_WORKLOADS) {
      Cell json8 = crossCells.get(cellKey(w, "JSON REST", 8));
      for (String protocol : List.of("binary REST", "gRPC")) {
        double ratio = crossCells.get(cellKey(w, protocol, 8)).rate() / json8.rate();
        md.append(
            String.format(
                Locale.ROOT,
                "- with h2load for every protocol, %s on %s at 8 clients: %.2fx JSON REST"
                    + " throughput (target ≥ 1.5x): %s%n",
                protocol,
                w.label(),
                ratio,
                ratio >= 1.5 ? "met" : "NOT met"));
      }
    }
    for (Workload w : WORKLOADS) {
      double floorP50 = floor.get(w.key())[1];
      for (String protocol : PROTOCOLS) {
        double p50 = cells.get(cellKey(w, protocol, 1)).percentileMicros(0.50);
        md.append(
            String.format(
                Locale.ROOT,
                "- %s 1-client round trip on %s: p50 %.0f µs = %.1fx the floor's %.1f µs (target ≤ 10x): %s%n",
                protocol,
                w.label(),
                p50,
                p50 / floorP50,
                floorP50,
                p50 / floorP50 <= 10 ? "met" : "NOT met"));
      }
    }
    double restAlone = cells.get("none|" + NO_MODEL.get(0) + "|1").percentileMicros(0.50);
    double grpcAlone = cells.get("none|" + NO_MODEL.get(1) + "|1").percentileMicros(0.50);
    double tenFloors =
        10
            * WORKLOADS.stream()
                .filter(w -> w.rows() == 1)
                .mapToDouble(w -> floor.get(w.key())[1])
                .max()
                .orElseThrow();
    md.append(
        String.format(
            Locale.ROOT,
            "%nFor one row, the 1-client target asks for a round trip under %.0f µs (10x the"
                + " floor). A round"
                + " trip that runs no model takes %.0f µs over REST and %.0f µs over gRPC here:"
                + " that is the order of what the transport alone costs on this machine. Those"
                + " cells run first in each round, just after the 64-client cells, and can read"
                + " slower than a REST inference of the same run, so they are no exact floor.%n",
            tenFloors,
            restAlone,
            grpcAlone));
    md.append("\n").append(NOTE).append("\n");
    return md.toString();
  }

  private static final String NOTE =
      "Clients. Every request body is encoded once before the cells run (8 per workload, sent in"
          + " turn), as wrk and Triton's perf_analyzer send prepared data, so the clients' CPU is"
          + " their I/O and the server does all the parsing. Each REST client thread holds one"
          + " keep-alive HTTP/1.1 connection over a plain socket and does its own I/O"
          + " (`BlockingHttpClient` in modelkeeper-benchmarks: write the request, read the status"
          + " line, the headers and exactly `Content-Length` bytes), as closed-loop load generators"
          + " do. A general-purpose asynchronous client (`java.net.http.HttpClient`) hands every"
          + " exchange across its selector and executor threads: several thread wake-ups per round"
          + " trip, which on this 2-core machine cost hundreds of µs that would be counted as the"
          + " server's. Each gRPC client has its own channel (its own HTTP/2 connection, as each"
          + " REST client has its own socket and as separate client processes would) and uses the"
          + " generated asynchronous stub with a direct executor: it starts its next call from the"
          + " completion of the last, on its channel's transport thread, as gRPC's own benchmark"
          + " clients do (the blocking stub would add two thread wake-ups per call). The channels"
          + " share a client event-loop group of one thread per processor, the clients' own: gRPC's"
          + " default would share the server's event-loop group in this JVM.\n\n"
          + "Server path per request, when the model is resident, has a free slot and does not"
          + " batch (as here). REST: the HTTP thread that received the request decodes it, runs"
          + " the model, encodes and writes the answer (no hand-off). gRPC: the transport's event"
          + " loop of the call's connection does the same for a model whose runs typically take at"
          + " most 200 µs (no hand-off); slower models are queued on their own executor. The"
          + " floor runs ONNX Runtime on the calling thread. With one-row requests (16 and 256"
          + " bytes of tensor data) the per-request costs of the transport dominate: binary tensors"
          + " save the formatting and parsing of a few dozen decimal numbers, a few µs of a"
          + " request, and gRPC saves HTTP/1.1's parsing. With the medium request (64 rows, 4,096"
          + " numbers in and 1,024 out) parsing and formatting decimal numbers is most of JSON's"
          + " cost, which the binary extension and gRPC's raw contents replace by copying bytes."
          + " What remains at one client is the transport itself and the thread wake-ups of a"
          + " round trip (REST: the server's HTTP thread and the client thread; gRPC: the server's"
          + " and the client's event loops), each tens of µs on this virtual machine and more"
          + " while other processes keep its two cores busy: the round trips without a model above"
          + " measure that cost.\n\n"
          + "CPU per request. A cell's server CPU is this process's CPU time while the cell ran"
          + " less its client threads' (the REST client threads, the gRPC clients' event loops),"
          + " divided by its requests: the JIT compiler's and the garbage collector's time count"
          + " as the server's. Clients and server share the two cores, so once both are busy a"
          + " cell's throughput is about two cores' time divided by server plus client CPU per"
          + " request: a protocol whose client costs more reaches fewer requests/s than its"
          + " server's cost alone allows. A server whose clients run on other machines is bounded"
          + " by the server column alone.\n\n"
          + "The h2load cells. The in-JVM clients above are not equally lean: grpc-java's client"
          + " machinery costs more CPU per call than a blocking socket writing prepared bytes, and"
          + " on two shared cores that cost is taken from the server. h2load treats the three"
          + " protocols alike (a prepared body per request, the answer read and dropped; one body"
          + " per cell rather than eight), and runs as its own process, so the server's CPU is"
          + " this process's whole CPU time and the client's is h2load's. Every request must be"
          + " answered 2xx, and the server's count of gRPC calls ended with a status other than OK"
          + " must not grow (h2load does not read gRPC's trailers). It is not used for the"
          + " 1-client round trips: its event loop adds a wake-up per round trip that a blocking"
          + " client does not.";
}
