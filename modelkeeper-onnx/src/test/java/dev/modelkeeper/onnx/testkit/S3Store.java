package dev.modelkeeper.onnx.testkit;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.stream.Stream;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3 server for tests: S3Proxy over a filesystem folder on a free loopback port, checking
 * SigV4 signatures against one access key and secret. Not thread-safe to start and stop; its
 * clients are.
 */
public final class S3Store implements AutoCloseable {

  public static final String ACCESS_KEY = "modelkeeper-test";
  public static final String SECRET = "modelkeeper-test-secret";

  private final S3Proxy proxy;
  private final BlobStoreContext context;

  private S3Store(S3Proxy proxy, BlobStoreContext context) {
    this.proxy = proxy;
    this.context = context;
  }

  /** Starts a store keeping its objects under {@code dir}. */
  public static S3Store start(Path dir) throws Exception {
    Properties props = new Properties();
    props.setProperty("jclouds.filesystem.basedir", dir.toString());
    BlobStoreContext context =
        ContextBuilder.newBuilder("filesystem")
            .credentials("identity", "credential")
            .overrides(props)
            .build(BlobStoreContext.class);
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(context.getBlobStore())
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET)
            .build();
    proxy.start();
    return new S3Store(proxy, context);
  }

  /** The store's endpoint, {@code http://127.0.0.1:<port>}. */
  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + proxy.getPort());
  }

  public int port() {
    return proxy.getPort();
  }

  /**
   * A client of the store with the right credentials; checksums only where required (S3Proxy
   * answers NotImplemented to the newer checksum headers).
   */
  public S3Client client() {
    return S3Client.builder()
        .endpointOverride(endpoint())
        .forcePathStyle(true)
        .region(Region.US_EAST_1)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET)))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .build();
  }

  /**
   * Creates {@code bucket} and uploads every file under {@code folder} to it under {@code prefix}.
   */
  public void upload(Path folder, String bucket, String prefix) throws IOException {
    try (S3Client s3 = client();
        Stream<Path> files = Files.walk(folder)) {
      if (!s3.listBuckets().buckets().stream().anyMatch(b -> b.name().equals(bucket))) {
        s3.createBucket(b -> b.bucket(bucket));
      }
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(f)) {
          String key = prefix + folder.relativize(f).toString().replace('\\', '/');
          s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromFile(f));
        }
      }
    }
  }

  @Override
  public void close() throws Exception {
    proxy.stop();
    context.close();
  }
}
