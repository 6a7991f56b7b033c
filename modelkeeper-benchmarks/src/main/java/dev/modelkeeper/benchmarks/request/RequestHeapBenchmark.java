package dev.modelkeeper.benchmarks.request;

import com.google.protobuf.ByteString;
import com.sun.management.ThreadMXBean;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Heap the server allocates per inference request with a 1 MiB FP32 input (21 convnet images of
 * 3x64x64), in each request form: binary REST, JSON REST and gRPC raw contents. The server runs in
 * this JVM; the client, on its own threads, is not counted: the figure is the sum of what the
 * server's threads (Jetty's, ModelKeeper's and gRPC's transport) allocated ({@link
 * ThreadMXBean#getThreadAllocatedBytes}) over the measured requests, divided by their number. One
 * client, one request at a time, after a warm-up. Not thread-safe; one run at a time.
 */
@Command(name = "dev.modelkeeper.benchmarks.request.RequestHeapBenchmark", sortOptions = false)
public final class RequestHeapBenchmark implements Callable<Integer> {

  private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** The threads whose allocations are the server's. */
  private static final List<String> SERVER_THREADS =
      List.of("JettyServerThreadPool", "modelkeeper-", "grpc-transport", "grpc-accept");

  /** Images per request: 21 x 3 x 64 x 64 FP32 = 1,032,192 bytes, just under 1 MiB. */
  static final int IMAGES = 21;

  static final int IMAGE_FLOATS = 3 * 64 * 64;

  @Option(
      names = "--requests",
      paramLabel = "N",
      defaultValue = "100",
      description = "Measured requests per form (default: ${DEFAULT-VALUE}).")
  int requests;

  @Option(
      names = "--warmup",
      paramLabel = "N",
      defaultValue = "40",
      description = "Requests per form before measuring (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(
      names = "--out",
      paramLabel = "FILE",
      description = "Also write the report there, e.g. docs/bench/request-heap.md.")
  Path out;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  public static void main(String[] args) {
    System.exit(new CommandLine(new RequestHeapBenchmark()).execute(args));
  }

  /** One request form and how to send one request of it. */
  private record Form(String name, long bodyBytes, Sender sender) {}

  @FunctionalInterface
  private interface Sender {
    void send() throws Exception;
  }

  @Override
  public Integer call() throws Exception {
    if (requests < 1 || warmup < 0) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--requests must be at least 1 and --warmup not negative");
    }
    String loadBefore = Files.readString(Path.of("/proc/loadavg")).trim();
    Instant started = Instant.now();
    Path repo = Files.createTempDirectory("mk-request-heap");
    DemoRepository.materialize(repo);
    ServerConfig config =
        ServerConfig.of(new LocalModelRepository(repo))
            .network(n -> n.withHost("127.0.0.1").withPort(0).withGrpcPort(0))
            .withPin(List.of("convnet"));
    float[] images = images();
    List<String> rows = new ArrayList<>();
    try (ModelKeeperServer server = ModelKeeperServer.start(config)) {
      if (!server.awaitReady(Duration.ofMinutes(2))) {
        throw new IllegalStateException("the server did not become ready");
      }
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
              .usePlaintext()
              .maxInboundMessageSize(64 << 20)
              .build();
      try (LoopbackHttp rest = new LoopbackHttp(server.port())) {
        byte[] binary = binaryRequest(images);
        byte[] json = jsonRequest(images);
        ModelInferRequest grpc = grpcRequest(images);
        List<Form> forms =
            List.of(
                new Form("binary REST", binary.length, () -> rest.send(binary)),
                new Form("JSON REST", json.length, () -> rest.send(json)),
                new Form(
                    "gRPC raw contents",
                    grpc.getSerializedSize(),
                    () ->
                        GRPCInferenceServiceGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(30, TimeUnit.SECONDS)
                            .modelInfer(grpc)));
        for (Form f : forms) {
          for (int i = 0; i < warmup; i++) {
            f.sender().send();
          }
          long before = serverAllocated();
          long t0 = System.nanoTime();
          for (int i = 0; i < requests; i++) {
            f.sender().send();
          }
          double millis = (System.nanoTime() - t0) / 1e6 / requests;
          long perRequest = (serverAllocated() - before) / requests;
          long payload = (long) IMAGES * IMAGE_FLOATS * 4;
          rows.add(
              String.format(
                  Locale.ROOT,
                  "| %s | %,d | %,d | %,d | %.2f | %.1f |",
                  f.name(),
                  f.bodyBytes(),
                  payload,
                  perRequest,
                  (double) perRequest / payload,
                  millis));
          System.out.println(rows.get(rows.size() - 1));
        }
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
    String report = report(rows, started, loadBefore);
    System.out.println(report);
    if (out != null) {
      Files.writeString(out, report);
    }
    return 0;
  }

  private String report(List<String> rows, Instant started, String loadBefore) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append("## Heap per request, 1 MiB FP32 input\n\n");
    b.append(
        String.format(
            Locale.ROOT,
            "Measured %s, %d s; %d warm-up and %d measured requests per form, one client, one"
                + " request at a time; load average before %s, after %s. Command: `java -cp"
                + " modelkeeper-benchmarks/target/benchmarks.jar %s --out"
                + " docs/bench/request-heap.md`.%n%n",
            started,
            Duration.between(started, Instant.now()).toSeconds(),
            warmup,
            requests,
            loadBefore,
            Files.readString(Path.of("/proc/loadavg")).trim(),
            RequestHeapBenchmark.class.getName()));
    b.append(
        "The input is 21 convnet images (FP32 3x64x64, 1,032,192 bytes); the answer is 21 x 10"
            + " FP32 scores in the request's own form. *Heap per request* is what the server's"
            + " threads allocated per request (the client's threads are not counted).\n\n");
    b.append(
        "| Form | Body bytes | Tensor bytes | Heap per request | ÷ tensor bytes | ms per"
            + " request |\n");
    b.append("|---|---:|---:|---:|---:|---:|\n");
    rows.forEach(r -> b.append(r).append('\n'));
    return b.toString();
  }

  /** Bytes the server's threads allocated so far (threads that ended are not counted). */
  private static long serverAllocated() {
    long sum = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String name = t.getName();
      if (SERVER_THREADS.stream().anyMatch(name::startsWith)) {
        long n = THREADS.getThreadAllocatedBytes(t.getId());
        if (n > 0) {
          sum += n;
        }
      }
    }
    return sum;
  }

  private static float[] images() {
    float[] f = new float[IMAGES * IMAGE_FLOATS];
    for (int i = 0; i < f.length; i++) {
      f[i] = (i % 255) / 255f;
    }
    return f;
  }

  private static byte[] littleEndian(float[] values) {
    ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : values) {
      b.putFloat(v);
    }
    return b.array();
  }

  private static ModelInferRequest grpcRequest(float[] images) {
    return ModelInferRequest.newBuilder()
        .setModelName("convnet")
        .addInputs(
            ModelInferRequest.InferInputTensor.newBuilder()
                .setName("image")
                .setDatatype("FP32")
                .addShape(IMAGES)
                .addShape(3)
                .addShape(64)
                .addShape(64))
        .addRawInputContents(ByteString.copyFrom(littleEndian(images)))
        .build();
  }

  private static final String PATH = "/v2/models/convnet/infer";

  private static byte[] binaryRequest(float[] images) {
    byte[] data = littleEndian(images);
    byte[] header =
        ("{\"inputs\":[{\"name\":\"image\",\"datatype\":\"FP32\",\"shape\":["
                + IMAGES
                + ",3,64,64],\"parameters\":{\"binary_data_size\":"
                + data.length
                + "}}]}")
            .getBytes(StandardCharsets.UTF_8);
    byte[] body = new byte[header.length + data.length];
    System.arraycopy(header, 0, body, 0, header.length);
    System.arraycopy(data, 0, body, header.length, data.length);
    return LoopbackHttp.post(
        PATH,
        "application/octet-stream",
        "Inference-Header-Content-Length: " + header.length + "\r\n",
        body);
  }

  private static byte[] jsonRequest(float[] images) {
    StringBuilder b = new StringBuilder(images.length * 10);
    b.append("{\"inputs\":[{\"name\":\"image\",\"datatype\":\"FP32\",\"shape\":[")
        .append(IMAGES)
        .append(",3,64,64],\"data\":[");
    for (int i = 0; i < images.length; i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append(images[i]);
    }
    b.append("]}]}");
    return LoopbackHttp.post(
        PATH, "application/json", "", b.toString().getBytes(StandardCharsets.UTF_8));
  }
}
