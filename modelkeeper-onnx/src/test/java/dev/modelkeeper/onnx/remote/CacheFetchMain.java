package dev.modelkeeper.onnx.remote;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A second process for the cross-process download test: fetches one artifact into a shared cache,
 * printing {@code WAITING} when it finds another process holding the artifact's lock and {@code
 * DONE downloads=<n> path=<p>} at the end.
 */
public final class CacheFetchMain {

  private CacheFetchMain() {}

  public static void main(String[] args) {
    Path cacheDir = Path.of(args[0]);
    URI uri = URI.create(args[1]);
    String sha = args[2];
    long size = Long.parseLong(args[3]);
    ArtifactCache.Listener listener =
        new ArtifactCache.Listener() {
          @Override
          public void waitingForLock(URI u, String sha256) {
            System.out.println("WAITING");
            System.out.flush();
          }
        };
    ArtifactCache cache =
        new ArtifactCache(cacheDir, HttpClient.newHttpClient(), Duration.ofSeconds(60), listener);
    System.out.println("STARTED");
    System.out.flush();
    Path p = cache.fetch(uri, sha, size);
    System.out.println("DONE downloads=" + cache.downloadCount() + " path=" + p);
    System.out.flush();
  }
}
