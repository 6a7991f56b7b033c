package dev.modelkeeper.onnx;

import dev.modelkeeper.onnx.remote.ArtifactCache;
import dev.modelkeeper.onnx.remote.HttpModelRepository;
import dev.modelkeeper.onnx.remote.S3Location;
import dev.modelkeeper.onnx.remote.S3ModelRepository;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Opens a {@link ModelRepository} from a command-line style location. Stateless and thread-safe.
 */
public final class ModelRepositories {

  /** The download timeout used by {@link #open}. */
  public static final Duration DEFAULT_DOWNLOAD_TIMEOUT = Duration.ofMinutes(10);

  private ModelRepositories() {}

  /**
   * A repository at {@code location}: an {@code s3://} location ({@link S3Location}), an {@code
   * http://} or {@code https://} URL (artifacts of both cached in {@code cacheDir}) or a local
   * folder.
   *
   * @throws IllegalArgumentException when the folder does not exist or the URL is malformed
   */
  public static ModelRepository open(String location, Path cacheDir) {
    String lower = location.toLowerCase(Locale.ROOT);
    boolean s3 = lower.startsWith("s3://");
    if (s3 || lower.startsWith("http://") || lower.startsWith("https://")) {
      HttpClient client =
          HttpClient.newBuilder()
              .connectTimeout(Duration.ofSeconds(30))
              .followRedirects(HttpClient.Redirect.NORMAL)
              .build();
      if (s3) {
        S3Location where = S3Location.parse(location);
        return new S3ModelRepository(
            where,
            where.client(Duration.ofMinutes(1)),
            new ArtifactCache(cacheDir, client, DEFAULT_DOWNLOAD_TIMEOUT),
            Duration.ofSeconds(30));
      }
      return new HttpModelRepository(
          URI.create(location),
          new ArtifactCache(cacheDir, client, DEFAULT_DOWNLOAD_TIMEOUT),
          client);
    }
    return new LocalModelRepository(Path.of(location));
  }
}
