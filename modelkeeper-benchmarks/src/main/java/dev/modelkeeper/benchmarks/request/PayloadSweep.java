package dev.modelkeeper.benchmarks.request;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import java.io.IOException;
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
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Where the binary tensor data extension overtakes JSON: one client sends iris requests whose FP32
 * input is 1 KiB, 64 KiB, 1 MiB and 8 MiB (values at full precision), as JSON and as binary
 * (answers in the same form), to a server in this JVM, alternating the two forms in rounds, and
 * reports the median time per request of each. Not thread-safe; one run at a time.
 */
@Command(name = "dev.modelkeeper.benchmarks.request.PayloadSweep", sortOptions = false)
public final class PayloadSweep implements Callable<Integer> {

  /** Input sizes in bytes: 1 KiB, 64 KiB, 1 MiB, 8 MiB of FP32 (16 bytes per iris row). */
  private static final String PATH = "/v2/models/iris/infer";

  static final List<Integer> SIZES = List.of(1 << 10, 64 << 10, 1 << 20, 8 << 20);

  @Option(
      names = "--rounds",
      paramLabel = "N",
      defaultValue = "5",
      description = "Rounds; each times every size in both forms (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Option(
      names = "--seconds",
      paramLabel = "S",
      defaultValue = "1",
      description = "Seconds per size, form and round (default: ${DEFAULT-VALUE}).")
  double seconds;

  @Option(
      names = "--out",
      paramLabel = "FILE",
      description = "Also write the report there, e.g. docs/bench/payload-sweep.md.")
  Path out;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  public static void main(String[] args) {
    System.exit(new CommandLine(new PayloadSweep()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (rounds < 1 || !(seconds > 0)) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--rounds must be at least 1 and --seconds more than 0");
    }
    String loadBefore = Files.readString(Path.of("/proc/loadavg")).trim();
    Instant started = Instant.now();
    Path repo = Files.createTempDirectory("mk-payload-sweep");
    DemoRepository.materialize(repo);
    ServerConfig config =
        ServerConfig.of(new LocalModelRepository(repo))
            .network(n -> n.withHost("127.0.0.1").withPort(0).withGrpcPort(ServerConfig.GRPC_OFF))
            .budgets(m -> m.withMaxRequestBytes(256L << 20))
            .withPin(List.of("iris"));
    List<String> rows = new ArrayList<>();
    try (ModelKeeperServer server = ModelKeeperServer.start(config);
        LoopbackHttp http = new LoopbackHttp(server.port())) {
      if (!server.awaitReady(Duration.ofMinutes(2))) {
        throw new IllegalStateException("the server did not become ready");
      }
      for (int size : SIZES) {
        int n = size / 16;
        byte[] json = json(n);
        byte[] binary = binary(n);
        double[][] millis = new double[2][rounds];
        for (int r = 0; r < rounds; r++) {
          millis[0][r] = time(http, json);
          millis[1][r] = time(http, binary);
        }
        double j = median(millis[0]);
        double b = median(millis[1]);
        rows.add(
            String.format(
                Locale.ROOT,
                "| %s | %,d | %,d | %.3f | %.3f | %.2f |",
                label(size),
                json.length,
                binary.length,
                j,
                b,
                j / b));
        System.out.println(rows.get(rows.size() - 1));
      }
    }
    StringBuilder report = new StringBuilder();
    report.append("## JSON or binary, by payload size\n\n");
    report.append(
        String.format(
            Locale.ROOT,
            "Measured %s, %d s; iris, one client over one keep-alive connection, the answer in the"
                + " request's form (JSON numbers, or binary outputs with `binary_data_output`);"
                + " %d rounds of %.1f s per size and form, the forms alternating; medians of the"
                + " rounds. Load average before %s, after %s. Command: `java -cp"
                + " modelkeeper-benchmarks/target/benchmarks.jar %s --out"
                + " docs/bench/payload-sweep.md`.%n%n",
            started,
            Duration.between(started, Instant.now()).toSeconds(),
            rounds,
            seconds,
            loadBefore,
            Files.readString(Path.of("/proc/loadavg")).trim(),
            PayloadSweep.class.getName()));
    report.append(
        "| FP32 input | JSON body bytes | binary body bytes | JSON ms per request | binary ms per"
            + " request | JSON ÷ binary |\n");
    report.append("|---|---:|---:|---:|---:|---:|\n");
    rows.forEach(r -> report.append(r).append('\n'));
    System.out.println(report);
    if (out != null) {
      Files.writeString(out, report.toString());
    }
    return 0;
  }

  private static String label(int size) {
    return size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB";
  }

  /** Milliseconds per request of {@code request}, sent back to back for {@link #seconds}. */
  private double time(LoopbackHttp http, byte[] request) throws IOException {
    http.send(request); // one untimed: the connection's buffers and the JIT see this size first
    long end = System.nanoTime() + (long) (seconds * 1e9);
    long start = System.nanoTime();
    int n = 0;
    do {
      http.send(request);
      n++;
    } while (System.nanoTime() < end);
    return (System.nanoTime() - start) / 1e6 / n;
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    java.util.Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  /** Measurements as a client would send them: full FP32 precision, e.g. 5.1735616. */
  private static float row(int i, int k) {
    return 4.0f + ((i * 7919 + k * 104729) % 40000) / 10007f;
  }

  private static byte[] json(int rowsCount) {
    StringBuilder b = new StringBuilder(rowsCount * 16 + 100);
    b.append("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[")
        .append(rowsCount)
        .append(",4],\"data\":[");
    for (int i = 0; i < rowsCount; i++) {
      for (int k = 0; k < 4; k++) {
        if (i > 0 || k > 0) {
          b.append(',');
        }
        b.append(row(i, k));
      }
    }
    b.append("]}]}");
    return LoopbackHttp.post(
        PATH, "application/json", "", b.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static byte[] binary(int rowsCount) {
    ByteBuffer data = ByteBuffer.allocate(rowsCount * 16).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < rowsCount; i++) {
      for (int k = 0; k < 4; k++) {
        data.putFloat(row(i, k));
      }
    }
    byte[] header =
        ("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":["
                + rowsCount
                + ",4],\"parameters\":{\"binary_data_size\":"
                + data.capacity()
                + "}}],\"parameters\":{\"binary_data_output\":true}}")
            .getBytes(StandardCharsets.UTF_8);
    byte[] body = new byte[header.length + data.capacity()];
    System.arraycopy(header, 0, body, 0, header.length);
    System.arraycopy(data.array(), 0, body, header.length, data.capacity());
    return LoopbackHttp.post(
        PATH,
        "application/octet-stream",
        "Inference-Header-Content-Length: " + header.length + "\r\n",
        body);
  }
}
