package dev.modelkeeper.onnx.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidModelIdException;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepositories;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.RepositoryModelRegistry;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.onnx.TestRepos;
import dev.modelkeeper.onnx.memory.MemoryCost;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The demo repository served over loopback HTTP and used through the registry and manager. */
class HttpModelRepositoryTest {

  @TempDir Path tmp;
  private ArtifactServer server;
  private HttpModelRepository repository;
  private RepositoryModelRegistry registry;

  @BeforeEach
  void setUp() throws Exception {
    server = new ArtifactServer();
    Path root = TestRepos.demo();
    String manifest = Manifest.write(root);
    server.put(
        Manifest.FILE_NAME, manifest.getBytes(StandardCharsets.UTF_8), ArtifactServer.Mode.NORMAL);
    for (Manifest.Entry e : Manifest.parse(manifest).entries()) {
      server.put(e.path(), Files.readAllBytes(root.resolve(e.path())), ArtifactServer.Mode.NORMAL);
    }
    HttpClient client = HttpClient.newHttpClient();
    repository =
        new HttpModelRepository(
            server.uri(""),
            new ArtifactCache(tmp.resolve("cache"), client, Duration.ofSeconds(30)),
            client);
    registry = new RepositoryModelRegistry(repository);
  }

  @AfterEach
  void tearDown() {
    server.close();
  }

  @Test
  void list_remoteDemo_matchesLocalListing() {
    assertThat(registry.list())
        .isEqualTo(new LocalModelRepository(TestRepos.demo()).list())
        .extracting(RepositoryEntry::id)
        .contains("iris/1", "types/1");
  }

  @Test
  void acquire_remoteIris_downloadsOnceAndClassifies() {
    BaseModelManager manager = new BaseModelManager(registry);
    try {
      for (int round = 0; round < 2; round++) {
        try (ModelLease lease = manager.acquire("iris", null)) {
          Map<String, Tensor> out =
              ((InferenceModel) lease.model())
                  .infer(
                      Map.of(
                          "input",
                          Tensor.ofFloats("input", new long[] {1, 4}, 6.3f, 3.3f, 6.0f, 2.5f)),
                      Set.of("label"));
          assertThat(out.get("label").longs()).containsExactly(2);
          assertThat(((InferenceModel) lease.model()).metadata().labels())
              .containsExactly("setosa", "versicolor", "virginica");
        }
        manager.remove("iris");
      }
    } finally {
      manager.clear();
    }
    assertThat(server.requests("iris/1/model.onnx")).isEqualTo(1);
  }

  @Test
  void getModel_unknownModel_throwsModelNotFound() {
    assertThatThrownBy(() -> registry.getModel("nosuch", null))
        .isInstanceOf(ModelNotFoundException.class);
    assertThatThrownBy(() -> registry.getModel("iris/7", null))
        .isInstanceOf(ModelNotFoundException.class);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"../manifest.sha256", "iris%2F1", "..%2F..%2Fetc", "iris/1/model.onnx", "/iris"})
  void getModel_traversalAttempt_throwsInvalidModelIdWithoutRequest(String id) {
    assertThatThrownBy(() -> registry.getModel(id, null))
        .isInstanceOf(InvalidModelIdException.class);
    assertThat(server.requests(Manifest.FILE_NAME)).isZero();
  }

  @Test
  void predictedSizeBytes_comesFromTheManifestWithoutDownloadingTheModel() throws Exception {
    long size = registry.getModel("mlp-small/2", null).predictedSizeBytes("mlp-small/2");
    assertThat(size)
        .isEqualTo(
            MemoryCost.estimate(Files.size(TestRepos.modelFile("mlp-small", "2"))).loadPeakBytes());
    assertThat(server.requests("mlp-small/2/model.onnx")).isZero();
  }

  @Test
  void fetch_manifestServerDown_throwsDownloadException() {
    server.close();
    assertThatThrownBy(() -> registry.getModel("iris", null))
        .isInstanceOf(ArtifactDownloadException.class);
  }

  @Test
  void open_urlOrFolder_picksTheRepositoryKind() {
    ModelRepository remote = ModelRepositories.open(server.uri("").toString(), tmp.resolve("c2"));
    assertThat(remote).isInstanceOf(HttpModelRepository.class);
    assertThat(remote.locate(ModelId.parse("mlp-small")).version()).isEqualTo("2");
    assertThat(ModelRepositories.open(TestRepos.demo().toString(), tmp))
        .isInstanceOf(LocalModelRepository.class);
  }

  @Test
  void parse_manifestWithEscapingPath_isRejected() {
    String sha = "a".repeat(64);
    assertThatThrownBy(() -> Manifest.parse(sha + " 1 ../x/1/model.onnx"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("line 1");
    assertThatThrownBy(() -> Manifest.parse(sha + " 1 /etc/passwd"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Manifest.parse(sha + " 1 a/%2e%2e/b"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Manifest.parse(sha + " -1 a/1/model.onnx"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(Manifest.parse("# c\n\n" + sha + " 12 a/1/model.onnx\n").entry("a/1/model.onnx"))
        .hasValue(new Manifest.Entry("a/1/model.onnx", sha, 12));
  }
}
