package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code serve --repository http://...}: models listed from a manifest, downloaded into the cache.
 */
class RemoteRepositoryServeTest {

  @TempDir Path tmp;

  private HttpServer store;
  private final AtomicInteger modelDownloads = new AtomicInteger();

  @BeforeEach
  void startStore() throws IOException {
    Path root = DemoRepository.materialize(tmp.resolve("store"));
    store = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    store.createContext(
        "/demo/",
        exchange -> {
          String rel = exchange.getRequestURI().getPath().substring("/demo/".length());
          Path file = root.resolve(rel).normalize();
          if (!file.startsWith(root) || !Files.isRegularFile(file)) {
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
            return;
          }
          if (rel.endsWith("model.onnx")) {
            modelDownloads.incrementAndGet();
          }
          byte[] body = Files.readAllBytes(file);
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    store.start();
  }

  @AfterEach
  void stopStore() {
    store.stop(0);
  }

  @Test
  void serve_withHttpRepository_listsDownloadsAndServesModels() throws Exception {
    String url = "http://127.0.0.1:" + store.getAddress().getPort() + "/demo/";
    StringWriter out = new StringWriter();
    CommandLine cl =
        ModelKeeperCli.commandLine(
            Map.of(), new PrintWriter(out, true), new PrintWriter(new StringWriter(), true));
    ServeCommand serve =
        (ServeCommand)
            cl.parseArgs(
                    "serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--grpc-port",
                    "-1",
                    "--metrics-port",
                    "-1",
                    "--repository",
                    url,
                    "--cache-dir",
                    tmp.resolve("cache").toString())
                .subcommand()
                .commandSpec()
                .userObject();
    try (ModelKeeperServer server = serve.start()) {
      assertThat(out.toString()).contains("repository:  " + url).contains("6 found");
      Http http = Http.to(server.port());
      String body =
          "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\","
              + " \"data\": [6.3, 3.3, 6.0, 2.5]}], \"outputs\": [{\"name\": \"label\"}]}";
      Response first = http.post("/v2/models/iris/infer", body);
      assertThat(first.status()).as(first.toString()).isEqualTo(200);
      assertThat(first.json().get("outputs").get(0).get("data").get(0).asInt()).isEqualTo(2);
      assertThat(modelDownloads.get()).isEqualTo(1);
      assertThat(http.post("/v2/repository/models/iris/unload", "").status()).isEqualTo(200);
      assertThat(http.post("/v2/models/iris/infer", body).status()).isEqualTo(200);
      assertThat(modelDownloads.get()).as("reloaded from the disk cache").isEqualTo(1);
      try (Stream<Path> cached = Files.walk(tmp.resolve("cache"))) {
        assertThat(cached.filter(Files::isRegularFile)).isNotEmpty();
      }
    }
  }
}
