package dev.modelkeeper.server.sharedmemory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.request.SharedMemoryRef;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rules of {@link SharedMemoryRegions}, over files in a folder standing in for /dev/shm. */
class SharedMemoryRegionsTest {

  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  @TempDir Path root;

  private Path memory(String name, int bytes) throws IOException {
    return Files.write(root.resolve(name), new byte[bytes]);
  }

  private static Failure.Kind kind(Throwable t) {
    return ((SharedMemoryException) t).kind();
  }

  @Test
  void anInputWritten_isRead_andAnOutputWritten_atTheirOffsets() throws Exception {
    Path file = memory("region", 64);
    SharedMemoryRegions regions = new SharedMemoryRegions(root, 1 << 20);
    regions.register("r", "/region", 16, 48, LOOPBACK);
    assertThat(regions.status(null))
        .containsExactly(new SharedMemoryRegions.Status("r", "/region", 16, 48));
    Tensor out = Tensor.ofFloats("y", new long[] {2}, 1.5f, -2f);
    assertThat(regions.write(out, new SharedMemoryRef("r", 8, 8))).isEqualTo(8);
    ByteBuffer written = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(written.getFloat(16 + 8)).isEqualTo(1.5f);
    assertThat(written.getFloat(16 + 12)).isEqualTo(-2f);
    Tensor in = regions.read("x", Datatype.FP32, new long[] {2}, new SharedMemoryRef("r", 8, 8));
    assertThat(in.floats()).containsExactly(1.5f, -2f);
    regions.close();
  }

  @Test
  void onlyLoopbackClients_mayRegister() throws Exception {
    memory("region", 64);
    SharedMemoryRegions regions = new SharedMemoryRegions(root, 1 << 20);
    assertThatThrownBy(
            () -> regions.register("r", "/region", 0, 64, InetAddress.getByName("192.0.2.7")))
        .satisfies(e -> assertThat(kind(e)).isEqualTo(Failure.Kind.FORBIDDEN))
        .hasMessageContaining("loopback");
    assertThatThrownBy(() -> regions.register("r", "/region", 0, 64, null))
        .satisfies(e -> assertThat(kind(e)).isEqualTo(Failure.Kind.FORBIDDEN));
    assertThat(regions.status(null)).isEmpty();
  }

  @Test
  void keysOutsideTheRoot_areRefused() throws Exception {
    memory("region", 64);
    Files.createSymbolicLink(root.resolve("link"), root.resolve("region"));
    SharedMemoryRegions regions = new SharedMemoryRegions(root, 1 << 20);
    for (String key : List.of("../etc/passwd", "/a/b", "..", "", "/", "link", "nope")) {
      assertThatThrownBy(() -> regions.register("r", key, 0, 8, LOOPBACK))
          .as(key)
          .satisfies(e -> assertThat(kind(e)).isEqualTo(Failure.Kind.BAD_REQUEST));
    }
    assertThat(regions.mappedBytes()).isZero();
  }

  @Test
  void windowsPastTheEnd_areRefused() throws Exception {
    memory("region", 64);
    SharedMemoryRegions regions = new SharedMemoryRegions(root, 1 << 20);
    assertThatThrownBy(() -> regions.register("r", "region", 32, 64, LOOPBACK))
        .hasMessageContaining("has 64 bytes");
    regions.register("r", "region", 32, 32, LOOPBACK);
    assertThatThrownBy(
            () ->
                regions.read("x", Datatype.FP32, new long[] {4}, new SharedMemoryRef("r", 24, 16)))
        .hasMessageContaining("past the end");
    assertThatThrownBy(
            () ->
                regions.write(
                    Tensor.ofFloats("y", new long[] {2}, 1, 2), new SharedMemoryRef("r", 40, 8)))
        .hasMessageContaining("past the end");
    assertThatThrownBy(
            () ->
                regions.write(
                    Tensor.ofFloats("y", new long[] {3}, 1, 2, 3), new SharedMemoryRef("r", 0, 8)))
        .hasMessageContaining("takes 12 bytes");
  }

  @Test
  void theMappedBytes_stayWithinTheBound_andReturnOnUnregister() throws Exception {
    memory("a", 4096);
    memory("b", 4096);
    SharedMemoryRegions regions = new SharedMemoryRegions(root, 6000);
    regions.register("a", "a", 0, 4096, LOOPBACK);
    assertThatThrownBy(() -> regions.register("b", "b", 0, 4096, LOOPBACK))
        .satisfies(e -> assertThat(kind(e)).isEqualTo(Failure.Kind.TOO_LARGE))
        .hasMessageContaining("max-shared-memory-bytes");
    assertThatThrownBy(() -> regions.register("a", "b", 0, 16, LOOPBACK))
        .satisfies(e -> assertThat(kind(e)).isEqualTo(Failure.Kind.CONFLICT));
    regions.unregister("a");
    assertThat(regions.mappedBytes()).isZero();
    regions.register("b", "b", 0, 4096, LOOPBACK);
    assertThat(regions.mappedBytes()).isEqualTo(4096);
  }

  @Test
  void unregisteringWhileRequestsReadAndWrite_neverFaults() throws Exception {
    memory("region", 1 << 20);
    SharedMemoryRegions regions = new SharedMemoryRegions(root, 1 << 22);
    SharedMemoryRef ref = new SharedMemoryRef("r", 0, 1 << 20);
    Tensor out = Tensor.ofFloats("y", new long[] {1 << 18}, new float[1 << 18]);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 200; round++) {
        regions.register("r", "region", 0, 1 << 20, LOOPBACK);
        List<Future<?>> uses = new ArrayList<>();
        uses.add(pool.submit(() -> use(() -> regions.write(out, ref))));
        uses.add(pool.submit(() -> use(() -> regions.read("x", Datatype.FP32, out.shape(), ref))));
        regions.unregister("r");
        for (Future<?> f : uses) {
          f.get(10, TimeUnit.SECONDS); // a fault would kill the JVM, not fail here
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(regions.mappedBytes()).isZero();
  }

  /** Runs {@code use}: it either finishes or finds the region gone, nothing else. */
  private static void use(Runnable use) {
    try {
      use.run();
    } catch (SharedMemoryException e) {
      assertThat(e).hasMessageMatching(".*(was unregistered|is not registered).*");
    }
  }
}
