package dev.modelkeeper.server.engine;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The server's version, read once from a resource the build writes. Thread-safe. */
public final class ServerVersion {

  private static final String VERSION = read();

  private ServerVersion() {}

  public static String get() {
    return VERSION;
  }

  private static String read() {
    Properties p = new Properties();
    try (InputStream in =
        ServerVersion.class.getResourceAsStream("/dev/modelkeeper/server/version.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      return "unknown";
    }
    return p.getProperty("version", "unknown");
  }
}
