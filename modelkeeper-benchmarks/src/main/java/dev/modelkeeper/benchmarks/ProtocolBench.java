package dev.modelkeeper.benchmarks;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import com.google.protobuf.ByteString;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.ServerConfig;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.grpc.ServerLiveRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
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

/**
 * The protocol benchmark: one in-process server over loopback, the demo models {@code iris} and
 * {@code mlp-medium}, closed-loop clients (1, 8, 64) over JSON REST, binary REST (the binary tensor
 * data extension) and gRPC (raw contents), in interleaved rounds, next to the in-process floor
 * ({@code OrtSession.run} on the same input, measured in the same run). Writes {@code
 * docs/bench/protocols.md} and replaces the {@code ## Protocols} section at the end of {@code
 * docs/BENCHMARKS.md}. Not thread-safe; it is a program's entry point.
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.modelkeeper.benchmarks.ProtocolBench [--docs DIR]
 * [--rounds N] [--seconds S]}.
 */
public final class ProtocolBench {

  private static final List<String> MODELS = List.of("iris", "mlp-medium");
  private static final Map<String, Integer> WIDTH = Map.of("iris", 4, "mlp-medium", 64);
  private static final List<Integer> CLIENTS = List.of(1, 8, 64);

  /** JIT compilation in one warm-up round below which the compiler counts as quiet. */
  private static final long QUIET_COMPILE_MILLIS = 200;

  private static final Duration WARM_UP_LIMIT = Duration.ofMinutes(2);
  private static final List<String> PROTOCOLS = List.of("JSON REST", "binary REST", "gRPC");

  /** Round trips that run no model: what each transport costs by itself, at one client. */
  private static final List<String> NO_MODEL =
      List.of("REST GET /v2/health/live", "gRPC ServerLive");

  private ProtocolBench() {}

  /** One transport's blocking client for one calling thread; not thread-safe. */
  private interface Caller extends AutoCloseable {
    void call(String model, float[] row) throws Exception;

    @Override
    default void close() throws IOException {}
  }

  /** One transport: opens a {@link Caller} per client thread; thread-safe. */
  private interface Client {
    Caller open();
  }

  /** A call that completes on the client's transport thread, which then starts the next one. */
  @FunctionalInterface
  private interface AsyncCaller {
    /** Starts one call; {@code done} gets null when it succeeded, else its failure. */
    void call(String model, float[] row, Consumer<Throwable> done);
  }

  /** A closed-loop load of one protocol: {@code clients} callers for {@code seconds}. */
  @FunctionalInterface
  private interface Load {
    Cell run(String model, int clients, double seconds) throws InterruptedException;
  }

  /** Latencies and count of one cell (model, protocol, clients) over every round. */
  private static final class Cell {
    final List<long[]> latencies = new ArrayList<>();
    long requests;
    double seconds;

    double rate() {
      return requests / seconds;
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
    Path docs = Path.of("docs");
    int rounds = 3;
    double seconds = 2.0;
    String command = "scripts/bench-protocols.sh";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--docs" -> docs = Path.of(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--seconds" -> seconds = Double.parseDouble(args[++i]);
        case "--command" -> command = args[++i];
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path repo = Files.createTempDirectory("mk-protocol-bench");
    DemoRepository.materialize(repo);
    ServerConfig config =
        ServerConfig.builder(new LocalModelRepository(repo))
            .host("127.0.0.1")
            .port(0)
            .grpcPort(0)
            .pin(MODELS)
            .build();
    CpuSample cpuBefore = CpuSample.now();
    Instant started = Instant.now();
    Map<String, double[]> floor = new LinkedHashMap<>();
    Map<String, Cell> cells = new LinkedHashMap<>();
    String warmUp;
    try (ModelKeeperServer server = ModelKeeperServer.start(config)) {
      if (!server.awaitReady(Duration.ofMinutes(2))) {
        throw new IllegalStateException("the server did not become ready");
      }
      // no client thread hand-offs (see the NOTE): one keep-alive socket per REST client thread,
      // which does its own I/O; gRPC calls complete and start the next on the channel's transport
      // thread. That thread is the client's own, as in a client process: by default gRPC's client
      // and server in one JVM share one event-loop group, and a round trip then took 50 or 100 µs
      // depending on whether both ends of the connection landed on the same thread
      MultiThreadIoEventLoopGroup clientLoop =
          new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
              .eventLoopGroup(clientLoop)
              .channelType(NioSocketChannel.class)
              .usePlaintext()
              .directExecutor()
              .build();
      try {
        int port = server.port();
        Map<String, Load> clients = new LinkedHashMap<>();
        clients.put("JSON REST", (m, n, s) -> run(json(port), m, n, s));
        clients.put("binary REST", (m, n, s) -> run(binary(port), m, n, s));
        clients.put("gRPC", (m, n, s) -> runChained(grpc(channel), m, n, s));
        Map<String, Load> noModel = new LinkedHashMap<>();
        noModel.put(NO_MODEL.get(0), (m, n, s) -> run(live(port), m, n, s));
        noModel.put(NO_MODEL.get(1), (m, n, s) -> runChained(live(channel), m, n, s));
        // warm-up: every path, in rounds until the JIT compiler is quiet; compiling gRPC's and
        // Netty's code takes tens of seconds of a core here, and a cell measured meanwhile would
        // count the compiler's work against its protocol
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long warmStart = System.nanoTime();
        long compiledMillis;
        int warmRounds = 0;
        do {
          long before = jit.getTotalCompilationTime();
          for (String model : MODELS) {
            for (Load c : clients.values()) {
              c.run(model, 8, 1.0);
            }
          }
          for (Load c : noModel.values()) {
            c.run("none", 1, 1.0);
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
                "Warm-up: %d rounds over every path and model (%d s), until a round of 8 s spent"
                    + " %d ms compiling (quiet: at most %d ms, or %d s at most).",
                warmRounds,
                Duration.ofNanos(System.nanoTime() - warmStart).toSeconds(),
                compiledMillis,
                QUIET_COMPILE_MILLIS,
                WARM_UP_LIMIT.toSeconds());
        for (int r = 0; r < rounds; r++) {
          for (Map.Entry<String, Load> e : noModel.entrySet()) {
            Cell cell = cells.computeIfAbsent("none|" + e.getKey() + "|1", k -> new Cell());
            Cell one = e.getValue().run("none", 1, seconds);
            cell.latencies.addAll(one.latencies);
            cell.requests += one.requests;
            cell.seconds += one.seconds;
          }
          for (String model : MODELS) {
            floor.merge(
                model,
                floor(repo, model, seconds),
                (a, b) -> new double[] {a[0] + b[0], Math.min(a[1], b[1]), a[2] + b[2]});
            for (int n : CLIENTS) {
              List<String> order = new ArrayList<>(PROTOCOLS);
              java.util.Collections.rotate(order, r);
              for (String protocol : order) {
                Cell cell =
                    cells.computeIfAbsent(model + "|" + protocol + "|" + n, k -> new Cell());
                Cell one = clients.get(protocol).run(model, n, seconds);
                cell.latencies.addAll(one.latencies);
                cell.requests += one.requests;
                cell.seconds += one.seconds;
                System.out.printf(
                    Locale.ROOT,
                    "round %d %-10s %-11s %2d clients: %,9.0f req/s%n",
                    r + 1,
                    model,
                    protocol,
                    n,
                    one.rate());
              }
            }
          }
        }
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        clientLoop.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
      }
    }
    double others = CpuSample.now().othersShareSince(cpuBefore);
    String md =
        report(
            cells,
            floor,
            rounds,
            seconds,
            others,
            command,
            warmUp,
            Duration.between(started, Instant.now()));
    Files.createDirectories(docs.resolve("bench"));
    Files.writeString(docs.resolve("bench").resolve("protocols.md"), md);
    appendSection(docs.resolve("BENCHMARKS.md"), md);
    System.out.println(md);
  }

  /** Runs {@code clients} closed-loop callers for {@code seconds}. */
  private static Cell run(Client client, String model, int clients, double seconds)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(clients);
    List<long[]> latencies = new ArrayList<>();
    long[] counts = new long[clients];
    Throwable[] failure = new Throwable[1];
    List<Thread> threads = new ArrayList<>();
    long start = System.nanoTime();
    for (int t = 0; t < clients; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                Random random = new Random(id);
                float[] row = new float[WIDTH.getOrDefault(model, 0)];
                long[] lat = new long[1 << 16];
                int n = 0;
                try (Caller caller = client.open()) {
                  while (!stop.get()) {
                    for (int i = 0; i < row.length; i++) {
                      row[i] = random.nextFloat() * 8;
                    }
                    long t0 = System.nanoTime();
                    caller.call(model, row);
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
  private static Cell runChained(AsyncCaller caller, String model, int clients, double seconds)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(clients);
    List<Chain> chains = new ArrayList<>();
    long start = System.nanoTime();
    for (int t = 0; t < clients; t++) {
      Chain chain = new Chain(caller, model, new Random(t), stop, failure, done);
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
    return cell;
  }

  /** One closed-loop client of {@link #runChained}; its calls run one after another. */
  private static final class Chain {
    private final AsyncCaller caller;
    private final String model;
    private final Random random;
    private final AtomicBoolean stop;
    private final AtomicReference<Throwable> failure;
    private final CountDownLatch done;
    private final float[] row;
    private long[] latencies = new long[1 << 16];
    private int count;
    private long startedAt;

    Chain(
        AsyncCaller caller,
        String model,
        Random random,
        AtomicBoolean stop,
        AtomicReference<Throwable> failure,
        CountDownLatch done) {
      this.caller = caller;
      this.model = model;
      this.random = random;
      this.stop = stop;
      this.failure = failure;
      this.done = done;
      this.row = new float[WIDTH.getOrDefault(model, 0)];
    }

    void next() {
      for (int i = 0; i < row.length; i++) {
        row[i] = random.nextFloat() * 8;
      }
      startedAt = System.nanoTime();
      caller.call(model, row, this::completed);
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

  /** {@code OrtSession.run} on one row for {@code seconds}: {rate, min p50 µs, rounds}. */
  private static double[] floor(Path repo, String model, double seconds) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    Path file = repo.resolve(model).resolve("1").resolve("model.onnx");
    try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions()) {
      opts.setIntraOpNumThreads(1);
      try (OrtSession session = env.createSession(file.toString(), opts)) {
        String input = session.getInputNames().iterator().next();
        float[] row = new float[WIDTH.get(model)];
        Random random = new Random(1);
        long[] lat = new long[1 << 20];
        int n = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long start = System.nanoTime();
        while (System.nanoTime() < end && n < lat.length) {
          for (int i = 0; i < row.length; i++) {
            row[i] = random.nextFloat() * 8;
          }
          long t0 = System.nanoTime();
          try (OnnxTensor t =
                  OnnxTensor.createTensor(env, FloatBuffer.wrap(row), new long[] {1, row.length});
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

  private static Client json(int port) {
    return () -> {
      BlockingHttpClient http = http(port);
      Map<String, String> headers = Map.of("Content-Type", "application/json");
      return new Caller() {
        @Override
        public void call(String model, float[] row) throws IOException {
          StringBuilder sb = new StringBuilder(64 + row.length * 12);
          sb.append("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,")
              .append(row.length)
              .append("],\"data\":[");
          for (int i = 0; i < row.length; i++) {
            if (i > 0) {
              sb.append(',');
            }
            sb.append(row[i]);
          }
          sb.append("]}]}");
          BlockingHttpClient.Response r =
              http.post(
                  "/v2/models/" + model + "/infer",
                  headers,
                  sb.toString().getBytes(StandardCharsets.UTF_8));
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
    return () -> {
      BlockingHttpClient http = http(port);
      return new Caller() {
        @Override
        public void call(String model, float[] row) throws IOException {
          byte[] header =
              ("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,"
                      + row.length
                      + "],\"parameters\":{\"binary_data_size\":"
                      + row.length * 4
                      + "}}],\"parameters\":{\"binary_data_output\":true}}")
                  .getBytes(StandardCharsets.UTF_8);
          ByteBuffer body =
              ByteBuffer.allocate(header.length + row.length * 4).order(ByteOrder.LITTLE_ENDIAN);
          body.put(header);
          for (float f : row) {
            body.putFloat(f);
          }
          BlockingHttpClient.Response r =
              http.post(
                  "/v2/models/" + model + "/infer",
                  Map.of(
                      "Content-Type",
                      "application/octet-stream",
                      "Inference-Header-Content-Length",
                      Integer.toString(header.length)),
                  body.array());
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
    return () -> {
      BlockingHttpClient http = http(port);
      return new Caller() {
        @Override
        public void call(String model, float[] row) throws IOException {
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

  /** gRPC's round trip without a model: {@code ServerLive}. */
  private static AsyncCaller live(ManagedChannel channel) {
    GRPCInferenceServiceGrpc.GRPCInferenceServiceStub stub =
        GRPCInferenceServiceGrpc.newStub(channel);
    return (model, row, done) ->
        stub.withDeadlineAfter(60, TimeUnit.SECONDS)
            .serverLive(
                ServerLiveRequest.getDefaultInstance(),
                new Answer<>(done, r -> r.getLive() ? null : "not live"));
  }

  private static AsyncCaller grpc(ManagedChannel channel) {
    GRPCInferenceServiceGrpc.GRPCInferenceServiceStub stub =
        GRPCInferenceServiceGrpc.newStub(channel);
    return (model, row, done) -> {
      ByteBuffer raw = ByteBuffer.allocate(row.length * 4).order(ByteOrder.LITTLE_ENDIAN);
      for (float f : row) {
        raw.putFloat(f);
      }
      stub.withDeadlineAfter(60, TimeUnit.SECONDS)
          .modelInfer(
              ModelInferRequest.newBuilder()
                  .setModelName(model)
                  .addInputs(
                      ModelInferRequest.InferInputTensor.newBuilder()
                          .setName("input")
                          .setDatatype("FP32")
                          .addShape(1)
                          .addShape(row.length))
                  .addRawInputContents(ByteString.copyFrom(raw.array()))
                  .build(),
              new Answer<>(done, r -> r.getRawOutputContentsCount() == 0 ? "no outputs" : null));
    };
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

  private static String report(
      Map<String, Cell> cells,
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
        .append("one in-process server over loopback, closed-loop clients sending one row per ")
        .append("request, next to the in-process floor: `OrtSession.run` on the same input in the ")
        .append("same run (one thread). ")
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
    md.append("| model | clients | protocol | req/s | p50 µs | p99 µs | vs JSON REST |\n");
    md.append("|---|---:|---|---:|---:|---:|---:|\n");
    for (String model : MODELS) {
      double[] f = floor.get(model);
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | 1 | in-process floor (OrtSession.run) | %,.0f | %.1f | | |%n",
              model,
              f[0] / f[2],
              f[1]));
      for (int n : CLIENTS) {
        double jsonRate = cells.get(model + "|JSON REST|" + n).rate();
        for (String protocol : PROTOCOLS) {
          Cell c = cells.get(model + "|" + protocol + "|" + n);
          md.append(
              String.format(
                  Locale.ROOT,
                  "| %s | %d | %s | %,.0f | %.0f | %.0f | %.2fx |%n",
                  model,
                  n,
                  protocol,
                  c.rate(),
                  c.percentileMicros(0.50),
                  c.percentileMicros(0.99),
                  c.rate() / jsonRate));
        }
      }
    }
    md.append("\nRound trips that run no model (what the transport alone costs), 1 client:\n\n");
    md.append("| round trip | req/s | p50 µs | p99 µs |\n|---|---:|---:|---:|\n");
    for (String name : NO_MODEL) {
      Cell c = cells.get("none|" + name + "|1");
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %,.0f | %.0f | %.0f |%n",
              name,
              c.rate(),
              c.percentileMicros(0.50),
              c.percentileMicros(0.99)));
    }
    md.append("\nTargets:\n\n");
    double json8 = cells.get("mlp-medium|JSON REST|8").rate();
    for (String protocol : List.of("binary REST", "gRPC")) {
      double ratio = cells.get("mlp-medium|" + protocol + "|8").rate() / json8;
      md.append(
          String.format(
              Locale.ROOT,
              "- %s on mlp-medium at 8 clients: %.2fx JSON REST throughput (target ≥ 1.5x): %s%n",
              protocol,
              ratio,
              ratio >= 1.5 ? "met" : "NOT met"));
    }
    for (String model : MODELS) {
      double floorP50 = floor.get(model)[1];
      for (String protocol : PROTOCOLS) {
        double p50 = cells.get(model + "|" + protocol + "|1").percentileMicros(0.50);
        md.append(
            String.format(
                Locale.ROOT,
                "- %s 1-client round trip on %s: p50 %.0f µs = %.1fx the floor's %.1f µs (target ≤ 10x): %s%n",
                protocol,
                model,
                p50,
                p50 / floorP50,
                floorP50,
                p50 / floorP50 <= 10 ? "met" : "NOT met"));
      }
    }
    double restAlone = cells.get("none|" + NO_MODEL.get(0) + "|1").percentileMicros(0.50);
    double grpcAlone = cells.get("none|" + NO_MODEL.get(1) + "|1").percentileMicros(0.50);
    double tenFloors = 10 * Math.max(floor.get("iris")[1], floor.get("mlp-medium")[1]);
    md.append(
        String.format(
            Locale.ROOT,
            "%nThe 1-client target asks for a round trip under %.0f µs (10x the floor). A round"
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
      "Clients. Each REST client thread holds one keep-alive HTTP/1.1 connection over a plain"
          + " socket and does its own I/O (`BlockingHttpClient` in modelkeeper-benchmarks: write"
          + " the request, read the status line, the headers and exactly `Content-Length` bytes),"
          + " as closed-loop load generators such as wrk do. A general-purpose asynchronous client"
          + " (`java.net.http.HttpClient`) hands every exchange across its selector and executor"
          + " threads: several thread wake-ups per round trip, which on this 2-core machine cost"
          + " hundreds of µs that would be counted as the server's. gRPC uses the"
          + " generated asynchronous stub over one channel with a direct executor: each client"
          + " starts its next call from the completion of the last, on the channel's transport"
          + " thread, as gRPC's own benchmark clients do (the blocking stub would add two thread"
          + " wake-ups per call: the transport thread waking the caller, and the caller's write"
          + " handed to the transport thread). That transport thread is the client's own, as in a"
          + " separate client process; gRPC's default would share the server's event-loop group"
          + " in this JVM.\n\n"
          + "Server path per request, when the model is resident, has a free slot and does not"
          + " batch (as here). REST: the HTTP thread that received the request decodes it, runs"
          + " the model, encodes and writes the answer (no hand-off). gRPC: the transport's event"
          + " loop does the same for a model whose runs typically take at most 200 µs (no"
          + " hand-off); slower models are queued on their own executor. The floor runs ONNX"
          + " Runtime on the calling thread. With one-row requests (16 and 256 bytes of tensor"
          + " data) the per-request costs of the transport dominate; binary tensors save the"
          + " formatting and parsing of decimal numbers, gRPC the HTTP/1.1 parsing and (with 8"
          + " or 64 clients) the connections, since its calls share one HTTP/2 connection. What"
          + " remains at one client is the transport itself and the thread wake-ups of a round"
          + " trip (REST: the server's HTTP thread and the client thread; gRPC: the server's and the"
          + " client's event loops), each"
          + " tens of µs on this virtual machine and more while other processes keep its two"
          + " cores busy: the round trips without a model above measure that cost.";

  /** Replaces the {@code ## Protocols} section of {@code file} (or appends it at the end). */
  private static void appendSection(Path file, String section) throws IOException {
    String text = Files.exists(file) ? Files.readString(file) : "";
    int at = text.indexOf("\n## Protocols\n");
    if (at >= 0) {
      int next = text.indexOf("\n## ", at + 1);
      text = text.substring(0, at) + (next >= 0 ? text.substring(next) : "");
    }
    text = text.stripTrailing() + "\n\n" + section;
    Files.writeString(file, text);
  }
}
