package dev.modelkeeper.onnx.remote;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A loopback HTTP server for download tests: static bodies, request counts and fault modes. */
final class ArtifactServer implements AutoCloseable {

  enum Mode {
    /** The body as it is. */
    NORMAL,
    /** Waits for {@link #release()} after the headers and half of the body, then sends the rest. */
    GATED,
    /** Same length, last byte flipped. */
    CORRUPT,
    /** As GATED, with the last byte flipped. */
    GATED_CORRUPT,
    /** Declares the full length, sends half and drops the connection. */
    DROPPED,
    /** A complete chunked response with only half of the body. */
    SHORT,
    /** Sends the headers and half of the body, then stalls until {@link #close()}. */
    STALLED_BODY,
    /** Stalls before sending any header until {@link #close()}. */
    STALLED_HEADERS,
    /** 404. */
    MISSING
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final Map<String, byte[]> bodies = new ConcurrentHashMap<>();
  private final Map<String, Mode> modes = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
  private final CountDownLatch gate = new CountDownLatch(1);
  private final CountDownLatch closing = new CountDownLatch(1);

  ArtifactServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  /** Serves {@code body} at {@code path} (no leading slash). */
  ArtifactServer put(String path, byte[] body, Mode mode) {
    bodies.put("/" + path, body);
    modes.put("/" + path, mode);
    return this;
  }

  ArtifactServer mode(String path, Mode mode) {
    modes.put("/" + path, mode);
    return this;
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/" + path);
  }

  int requests(String path) {
    AtomicInteger n = requests.get("/" + path);
    return n == null ? 0 : n.get();
  }

  /** Lets gated responses finish. */
  void release() {
    gate.countDown();
  }

  private void handle(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    requests.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    byte[] body = bodies.get(path);
    Mode mode = modes.getOrDefault(path, Mode.MISSING);
    try (ex) {
      if (body == null || mode == Mode.MISSING) {
        ex.sendResponseHeaders(404, -1);
        return;
      }
      int half = body.length / 2;
      OutputStream out = ex.getResponseBody();
      switch (mode) {
        case NORMAL:
          ex.sendResponseHeaders(200, body.length);
          out.write(body);
          break;
        case CORRUPT:
          byte[] bad = body.clone();
          bad[bad.length - 1] ^= 1;
          ex.sendResponseHeaders(200, bad.length);
          out.write(bad);
          break;
        case GATED:
        case GATED_CORRUPT:
          byte[] sent = body.clone();
          if (mode == Mode.GATED_CORRUPT) {
            sent[sent.length - 1] ^= 1;
          }
          ex.sendResponseHeaders(200, sent.length);
          out.write(sent, 0, half);
          out.flush();
          await(gate);
          out.write(sent, half, sent.length - half);
          break;
        case DROPPED:
          ex.sendResponseHeaders(200, body.length);
          out.write(body, 0, half);
          out.flush();
          throw new IOException("dropping the connection on purpose");
        case SHORT:
          ex.sendResponseHeaders(200, 0);
          out.write(body, 0, half);
          break;
        case STALLED_BODY:
          ex.sendResponseHeaders(200, body.length);
          out.write(body, 0, half);
          out.flush();
          await(closing);
          break;
        case STALLED_HEADERS:
          await(closing);
          break;
        default:
          throw new AssertionError(mode);
      }
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("test server latch was never released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    closing.countDown();
    gate.countDown();
    server.stop(0);
    executor.shutdownNow();
  }
}
