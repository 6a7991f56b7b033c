package dev.modelkeeper.scaleout;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the project's root folder. Stateless and thread-safe. */
final class Project {

  private Project() {}

  /** The nearest folder at or above the working directory holding deploy/haproxy/haproxy.cfg. */
  static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("deploy/haproxy/haproxy.cfg"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "run from inside the project: no deploy/haproxy/haproxy.cfg above "
            + Path.of("").toAbsolutePath());
  }
}
