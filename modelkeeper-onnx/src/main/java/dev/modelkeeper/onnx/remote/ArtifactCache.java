package dev.modelkeeper.onnx.remote;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A content-addressed disk cache of downloaded artifacts, shared by threads and by processes on
 * one host. Thread-safe and process-safe.
 */
public final class ArtifactCache {

  private final Path dir;
  private final HttpClient client;
  private final Duration downloadTimeout;

  public ArtifactCache(Path dir, HttpClient client, Duration downloadTimeout) {
    this.dir = dir;
    this.client = client;
    this.downloadTimeout = downloadTimeout;
  }

  /**
   * The verified local copy of the artifact at {@code uri}, downloading it when it is not cached.
   *
   * @throws ArtifactDownloadException when the download fails (subtypes for integrity and timeout)
   */
  public Path fetch(URI uri, String sha256, long size) {
    throw new UnsupportedOperationException("not yet implemented");
  }

  public Path dir() {
    return dir;
  }

  public HttpClient client() {
    return client;
  }

  public Duration downloadTimeout() {
    return downloadTimeout;
  }
}
