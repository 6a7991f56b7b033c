package dev.modelkeeper.interop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes sure programs a test needs are installed, installing their Debian packages with {@code
 * apt-get} when they are missing and the tests run as root; otherwise fails (never skips) with the
 * command that installs them. Not thread-safe; tests call it once.
 */
final class DebianPackages {

  private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(10);
  private static final List<String> SEARCHED = List.of("/usr/bin", "/usr/local/bin", "/bin");

  private DebianPackages() {}

  /**
   * The path of each program of {@code programs}, installing {@code packages} first when any is
   * missing.
   */
  static List<Path> require(List<String> programs, String... packages)
      throws IOException, InterruptedException {
    if (missing(programs).isEmpty()) {
      return paths(programs);
    }
    String install = "apt-get install -y --no-install-recommends " + String.join(" ", packages);
    boolean root = "root".equals(System.getProperty("user.name"));
    if (!root || !Files.isExecutable(Path.of("/usr/bin/apt-get"))) {
      throw new IllegalStateException(
          "missing " + missing(programs) + ": install them with '" + install + "' (as root)");
    }
    System.out.println("installing " + String.join(" ", packages) + " from Debian (once)");
    List<String> command = new ArrayList<>(List.of("apt-get", "-o", "DPkg::Lock::Timeout=300"));
    command.addAll(List.of("install", "-y", "--no-install-recommends"));
    command.addAll(List.of(packages));
    Processes.Outcome first = Processes.run(command, INSTALL_TIMEOUT);
    if (first.exitCode() != 0) { // the package lists may be stale or absent: refresh them once
      Processes.run(List.of("apt-get", "-o", "DPkg::Lock::Timeout=300", "update"), INSTALL_TIMEOUT);
      Processes.Outcome second = Processes.run(command, INSTALL_TIMEOUT);
      if (second.exitCode() != 0) {
        throw new IllegalStateException(
            "'" + install + "' failed (exit " + second.exitCode() + ")\n" + second.output());
      }
    }
    if (!missing(programs).isEmpty()) {
      throw new IllegalStateException(
          "'" + install + "' succeeded but " + missing(programs) + " are still missing");
    }
    return paths(programs);
  }

  private static List<String> missing(List<String> programs) {
    List<String> out = new ArrayList<>();
    for (String p : programs) {
      if (find(p) == null) {
        out.add(p);
      }
    }
    return out;
  }

  private static List<Path> paths(List<String> programs) {
    List<Path> out = new ArrayList<>();
    for (String p : programs) {
      out.add(find(p));
    }
    return out;
  }

  private static Path find(String program) {
    for (String dir : SEARCHED) {
      Path p = Path.of(dir, program);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }
}
