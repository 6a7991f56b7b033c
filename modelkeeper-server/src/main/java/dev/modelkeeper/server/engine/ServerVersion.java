package dev.modelkeeper.server.engine;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The server's version and the versions of what it bundles, read once from a resource the build
 * writes. Thread-safe.
 */
public final class ServerVersion {

  private static final Properties VERSIONS = read();

  private ServerVersion() {}

  /** The server's version. */
  public static String get() {
    return of("version");
  }

  /** The version the build recorded under {@code key} (e.g. {@code swagger-ui}), or "unknown". */
  public static String of(String key) {
    return VERSIONS.getProperty(key, "unknown");
  }

  private static Properties read() {
    Properties p = new Properties();
    try (InputStream in =
        ServerVersion.class.getResourceAsStream("/dev/modelkeeper/server/version.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      p.clear(); // every version reads "unknown"
    }
    return p;
  }
}
