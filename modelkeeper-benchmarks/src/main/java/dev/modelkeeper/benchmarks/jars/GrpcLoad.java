package dev.modelkeeper.benchmarks.jars;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import dev.modelkeeper.benchmarks.memory.ClosedLoop;
import dev.modelkeeper.benchmarks.memory.InferRequest;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The other forms of a workload's request, made from its binary REST request (same tensors, same
 * values): JSON REST and gRPC with raw contents; and closed-loop gRPC load, as {@link ClosedLoop}
 * puts HTTP load: one thread and one connection per client, no retries. Stateless; the load runs
 * its own threads and joins them.
 */
final class GrpcLoad {

  private static final ObjectMapper JSON = new ObjectMapper();

  private GrpcLoad() {}

  /** The inputs of a binary REST request: header fields and the bytes each claims, in order. */
  private record Part(String name, String datatype, long[] shape, ByteBuffer bytes) {}

  private static List<Part> parts(InferRequest binary) throws IOException {
    int headerLength = Integer.parseInt(binary.headers().get("Inference-Header-Content-Length"));
    JsonNode header = JSON.readTree(Arrays.copyOf(binary.body(), headerLength));
    List<Part> parts = new ArrayList<>();
    int at = headerLength;
    for (JsonNode in : header.get("inputs")) {
      long[] shape = new long[in.get("shape").size()];
      for (int i = 0; i < shape.length; i++) {
        shape[i] = in.get("shape").get(i).asLong();
      }
      int size = in.get("parameters").get("binary_data_size").asInt();
      ByteBuffer bytes =
          ByteBuffer.wrap(binary.body(), at, size).slice().order(ByteOrder.LITTLE_ENDIAN);
      parts.add(new Part(in.get("name").asText(), in.get("datatype").asText(), shape, bytes));
      at += size;
    }
    return parts;
  }

  /** {@code binary}'s tensors as a JSON REST request, the answer in JSON too. */
  static InferRequest toJson(InferRequest binary) throws IOException {
    ObjectNode body = JSON.createObjectNode();
    ArrayNode inputs = body.putArray("inputs");
    for (Part p : parts(binary)) {
      Datatype type = Datatype.parse(p.datatype());
      int count = 1;
      for (long d : p.shape()) {
        count *= (int) d;
      }
      Tensor t = Tensor.of(p.name(), type, p.shape(), type.fromBinary(p.name(), p.bytes(), count));
      ObjectNode in = inputs.addObject();
      in.put("name", p.name());
      in.put("datatype", p.datatype());
      ArrayNode shape = in.putArray("shape");
      for (long d : p.shape()) {
        shape.add(d);
      }
      in.set("data", JSON.valueToTree(t.toList()));
    }
    Map<String, String> headers = new HashMap<>();
    headers.put("Content-Type", "application/json");
    return new InferRequest(
        binary.modelId(),
        binary.rows(),
        binary.path(),
        headers,
        JSON.writeValueAsString(body).getBytes(StandardCharsets.UTF_8));
  }

  /** {@code binary}'s tensors as a gRPC request with raw contents. */
  static ModelInferRequest toGrpc(InferRequest binary) throws IOException {
    String[] id = binary.modelId().split("/", 2);
    ModelInferRequest.Builder b =
        ModelInferRequest.newBuilder().setModelName(id[0]).setModelVersion(id[1]);
    for (Part p : parts(binary)) {
      ModelInferRequest.InferInputTensor.Builder in =
          b.addInputsBuilder().setName(p.name()).setDatatype(p.datatype());
      for (long d : p.shape()) {
        in.addShape(d);
      }
      b.addRawInputContents(ByteString.copyFrom(p.bytes()));
    }
    return b.build();
  }

  /**
   * {@code clients} closed-loop gRPC clients, each on a connection of its own, calling ModelInfer
   * with {@code request} on {@code port} for {@code duration}. A call that succeeds counts as 200;
   * a failed one by the HTTP status its code stands for (503 for UNAVAILABLE, 504 for
   * DEADLINE_EXCEEDED, 500 otherwise).
   */
  static ClosedLoop.Result run(
      int port, ModelInferRequest request, int clients, Duration duration, Duration timeout)
      throws InterruptedException {
    List<ManagedChannel> channels = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      channels.add(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build());
    }
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    List<Map<Integer, Long>> statuses = new ArrayList<>();
    List<long[]> latencies = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    try {
      for (ManagedChannel channel : channels) {
        Map<Integer, Long> byStatus = new HashMap<>();
        long[][] ok = {new long[1024]};
        int[] n = {0};
        statuses.add(byStatus);
        Thread t =
            new Thread(
                () -> {
                  GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub =
                      GRPCInferenceServiceGrpc.newBlockingStub(channel);
                  while (System.nanoTime() - end < 0) {
                    long t0 = System.nanoTime();
                    int status;
                    try {
                      stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                          .modelInfer(request);
                      status = 200;
                      if (n[0] == ok[0].length) {
                        ok[0] = Arrays.copyOf(ok[0], n[0] * 2);
                      }
                      ok[0][n[0]++] = System.nanoTime() - t0;
                    } catch (StatusRuntimeException e) {
                      status =
                          switch (e.getStatus().getCode()) {
                            case UNAVAILABLE -> 503;
                            case DEADLINE_EXCEEDED -> 504;
                            default -> 500;
                          };
                    }
                    byStatus.merge(status, 1L, Long::sum);
                  }
                  synchronized (latencies) {
                    latencies.add(Arrays.copyOf(ok[0], n[0]));
                  }
                },
                "grpc-load-" + threads.size());
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join(duration.toMillis() + timeout.toMillis() + 10_000);
        if (t.isAlive()) {
          throw new IllegalStateException("a gRPC load client did not finish in time");
        }
      }
    } finally {
      for (ManagedChannel channel : channels) {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<Integer, Long> all = new HashMap<>();
    statuses.forEach(m -> m.forEach((k, v) -> all.merge(k, v, Long::sum)));
    long[] okNanos = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
    return new ClosedLoop.Result(all, okNanos, seconds);
  }

  /**
   * Sends {@code request} once.
   *
   * @throws IllegalStateException naming the model and the status when it fails
   */
  static void check(int port, ModelInferRequest request, Duration timeout)
      throws InterruptedException {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    try {
      GRPCInferenceServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
          .modelInfer(request);
    } catch (StatusRuntimeException e) {
      throw new IllegalStateException(
          "the first gRPC request to " + request.getModelName() + " failed: " + e.getStatus(), e);
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
