package dev.modelkeeper.scaleout;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A static file server on loopback over a repository folder: a remote model repository for the
 * replicas, counting the GET requests of each path. Thread-safe.
 *
 * <p>Why a server of our own here: ScaleOutIT asserts how many times each file was downloaded
 * (three replicas sharing one cache fetch a model once), which a static file server such as {@code
 * python3 -m http.server} does not count. Test plumbing; it measures no published figure.
 */
public final class RepositoryServer implements AutoCloseable {

  private final Path root;
  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();

  /** Serves {@code root} on 127.0.0.1 at a free port. */
  public RepositoryServer(Path root) throws IOException {
    this.root = root.toAbsolutePath().normalize();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  /** The base URL, ending in a slash. */
  public String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/";
  }

  /** How many GETs {@code path} (relative, e.g. {@code m01/1/model.onnx}) received. */
  public int requests(String path) {
    AtomicInteger n = requests.get(path);
    return n == null ? 0 : n.get();
  }

  /** Every requested path with its count, sorted. */
  public Map<String, Integer> allRequests() {
    Map<String, Integer> out = new TreeMap<>();
    requests.forEach((p, n) -> out.put(p, n.get()));
    return out;
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getPath().substring(1);
      requests.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
      Path file = root.resolve(path).normalize();
      if (!ex.getRequestMethod().equals("GET")
          || !file.startsWith(root)
          || !Files.isRegularFile(file)) {
        ex.sendResponseHeaders(404, -1);
        return;
      }
      byte[] body = Files.readAllBytes(file);
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
