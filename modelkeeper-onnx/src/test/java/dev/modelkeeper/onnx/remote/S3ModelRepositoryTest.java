package dev.modelkeeper.onnx.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.testkit.LogCapture;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.TestRepos;
import dev.modelkeeper.onnx.testkit.CuttingProxy;
import dev.modelkeeper.onnx.testkit.S3Store;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/** An S3 repository against a real S3 server (S3Proxy) on loopback. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class S3ModelRepositoryTest {

  @TempDir static Path storeDir;
  @TempDir static Path sources;
  @TempDir Path cacheDir;

  private static S3Store store;
  private static byte[] big;

  @BeforeAll
  static void startStore() throws Exception {
    store = S3Store.start(storeDir);
    store.upload(TestRepos.demo(), "models", "repo/");
    big = new byte[300_000];
    new Random(7).nextBytes(big);
    Path bigModel = Files.createDirectories(sources.resolve("big/1")).resolve("model.onnx");
    Files.write(bigModel, big);
    store.upload(sources, "models", "cut/");
  }

  @AfterAll
  static void stopStore() throws Exception {
    if (store != null) {
      store.close();
    }
  }

  private static S3Client client(int port, String secret) {
    return S3Client.builder()
        .endpointOverride(URI.create("http://127.0.0.1:" + port))
        .forcePathStyle(true)
        .region(Region.US_EAST_1)
        .credentialsProvider(
            StaticCredentialsProvider.create(
                AwsBasicCredentials.create(S3Store.ACCESS_KEY, secret)))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .build();
  }

  private S3ModelRepository repository(String location, S3Client s3) {
    return new S3ModelRepository(
        S3Location.parse(location),
        s3,
        new ArtifactCache(cacheDir, HttpClient.newHttpClient(), Duration.ofSeconds(30)),
        Duration.ofSeconds(30));
  }

  @Test
  void listsAndFetchesWhatALocalFolderHolds_downloadingEachModelOnce() throws Exception {
    S3Client s3 = client(store.port(), S3Store.SECRET);
    String where = "s3://127.0.0.1:" + store.port() + "/models/repo";
    S3ModelRepository repo = repository(where, s3);
    LocalModelRepository local = new LocalModelRepository(TestRepos.demo());
    assertThat(repo.list()).isEqualTo(local.list());
    assertThat(repo.location()).isEqualTo(where);

    ModelArtifact iris = repo.fetch(new ModelId("iris", null));
    assertThat(iris.version()).isEqualTo("1");
    assertThat(Files.readAllBytes(iris.modelFile()))
        .isEqualTo(Files.readAllBytes(TestRepos.modelFile("iris", "1")));
    assertThat(iris.config()).isEqualTo(local.fetch(new ModelId("iris", "1")).config());

    // a second repository on the same cache (as a second process would be) downloads nothing
    ArtifactCache second =
        new ArtifactCache(cacheDir, HttpClient.newHttpClient(), Duration.ofSeconds(30));
    S3ModelRepository again =
        new S3ModelRepository(S3Location.parse(where), s3, second, Duration.ofSeconds(30));
    assertThat(again.fetch(new ModelId("iris", "1")).modelFile()).isEqualTo(iris.modelFile());
    assertThat(second.downloadCount()).isZero();
  }

  @Test
  void aWrongSecret_isNamedOnce_andLookupsAnswerUnavailable() {
    try (LogCapture log = LogCapture.of(S3ModelRepository.class)) {
      S3ModelRepository repo =
          repository(
              "s3://127.0.0.1:" + store.port() + "/models/repo",
              client(store.port(), "not-the-secret"));
      assertThatThrownBy(repo::list)
          .isInstanceOf(ArtifactDownloadException.class)
          .hasMessageContaining("refused the credentials (SignatureDoesNotMatch)")
          .hasMessageNotContaining("Exception");
      assertThatThrownBy(() -> repo.fetch(new ModelId("iris", null)))
          .isInstanceOf(ArtifactDownloadException.class);
      assertThat(log.entries())
          .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.message()).contains("its models are unavailable");
                assertThat(e.thrown()).isNull();
              });
    }
  }

  @Test
  void aMissingBucket_isNamed() {
    S3ModelRepository repo =
        repository(
            "s3://127.0.0.1:" + store.port() + "/no-such-bucket/repo",
            client(store.port(), S3Store.SECRET));
    assertThatThrownBy(repo::list)
        .isInstanceOf(ArtifactDownloadException.class)
        .hasMessageContaining("the bucket does not exist (NoSuchBucket)");
  }

  @Test
  void aStoreThatGoesAwayMidDownload_leavesNoPartialFile_andTheNextFetchSucceeds()
      throws Exception {
    try (CuttingProxy proxy = new CuttingProxy(store.port())) {
      S3ModelRepository repo =
          repository(
              "s3://127.0.0.1:" + proxy.port() + "/models/cut",
              client(proxy.port(), S3Store.SECRET));
      assertThat(repo.list()).extracting(RepositoryEntry::id).containsExactly("big/1");
      proxy.cutAfter(100_000); // the body breaks off a third of the way through
      assertThatThrownBy(() -> repo.fetch(new ModelId("big", "1")))
          .isInstanceOf(ArtifactDownloadException.class)
          .hasMessageContaining("s3://models/cut/big/1/model.onnx");
      try (Stream<Path> files = Files.list(cacheDir.resolve("sha256"))) {
        assertThat(files.map(p -> p.getFileName().toString()))
            .allSatisfy(name -> assertThat(name).endsWith(".lock"));
      }
      proxy.cutAfter(Long.MAX_VALUE);
      assertThat(Files.readAllBytes(repo.fetch(new ModelId("big", "1")).modelFile()))
          .isEqualTo(big);
    }
  }

  @Test
  void anUnreachableStore_isNamedWithoutAJavaClass() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    S3ModelRepository repo =
        repository("s3://127.0.0.1:" + closed + "/models/repo", client(closed, S3Store.SECRET));
    assertThatThrownBy(repo::list)
        .isInstanceOf(ArtifactDownloadException.class)
        .hasMessageContaining("cannot reach the store: connection refused")
        .hasMessageNotContaining("Exception");
  }
}
