package dev.modelkeeper.interop;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A Python virtual environment with the pinned client packages of {@code requirements.txt}, made
 * once per set of pins under {@code ~/.cache/modelkeeper/} and reused. Fails (never skips) naming
 * what is missing when Python, venv, pip or a package cannot be had. Not thread-safe; tests make it
 * once.
 */
final class PythonEnv {

  private static final Duration CREATE_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(10);

  private final Path python;

  private PythonEnv(Path python) {
    this.python = python;
  }

  /** The interpreter of the venv. */
  Path python() {
    return python;
  }

  /** The venv for {@code requirements}, made (and its packages installed) when missing. */
  static PythonEnv forRequirements(Path requirements) throws IOException, InterruptedException {
    String pins = Files.readString(requirements);
    Path root =
        Path.of(
            System.getProperty("user.home"), ".cache", "modelkeeper", "interop-venv-" + hash(pins));
    Path python = root.resolve("bin").resolve("python");
    Path done = root.resolve(".installed");
    if (Files.isRegularFile(done) && Files.isExecutable(python)) {
      return new PythonEnv(python);
    }
    String system = findPython();
    Processes.Outcome venv =
        Processes.run(List.of(system, "-m", "venv", "--clear", root.toString()), CREATE_TIMEOUT);
    if (venv.exitCode() != 0) {
      throw new IllegalStateException(
          "'"
              + system
              + " -m venv' failed (exit "
              + venv.exitCode()
              + "): the interop tests need"
              + " Python's venv module (Debian: apt-get install python3-venv)\n"
              + venv.output());
    }
    Processes.Outcome pip =
        Processes.run(
            List.of(
                python.toString(),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                "-r",
                requirements.toString()),
            INSTALL_TIMEOUT);
    if (pip.exitCode() != 0) {
      throw new IllegalStateException(
          "pip could not install the interop clients ("
              + String.join(", ", packages(pins))
              + ") from "
              + requirements
              + " (exit "
              + pip.exitCode()
              + "); they come from PyPI"
              + "\n"
              + pip.output());
    }
    Files.writeString(done, pins);
    return new PythonEnv(python);
  }

  private static String findPython() throws InterruptedException {
    for (String candidate : List.of("python3", "python")) {
      try {
        Processes.Outcome v =
            Processes.run(List.of(candidate, "--version"), Duration.ofSeconds(30));
        if (v.exitCode() == 0 && v.output().contains("Python 3")) {
          return candidate;
        }
      } catch (IOException notFound) {
        // try the next name
      }
    }
    throw new IllegalStateException(
        "no Python 3 on PATH (tried python3, python): the interop tests need Python 3.8+ with"
            + " venv and pip (Debian: apt-get install python3 python3-venv python3-pip)");
  }

  private static List<String> packages(String pins) {
    List<String> out = new ArrayList<>();
    for (String line : pins.split("\n")) {
      String l = line.strip();
      if (!l.isEmpty() && !l.startsWith("#")) {
        out.add(l);
      }
    }
    return out;
  }

  private static String hash(String pins) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(pins.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
