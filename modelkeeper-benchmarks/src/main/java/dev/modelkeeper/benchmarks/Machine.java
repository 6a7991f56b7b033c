package dev.modelkeeper.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Describes the machine a run happened on, from /proc and {@code java -version}. Stateless and
 * thread-safe.
 */
final class Machine {

  private Machine() {}

  /** Markdown lines: CPU, memory, OS and the JVM. */
  static String describe() {
    StringBuilder b = new StringBuilder();
    List<String> cpu = lines(Path.of("/proc/cpuinfo"));
    String model = field(cpu, "model name");
    long processors = cpu.stream().filter(l -> l.startsWith("processor")).count();
    b.append("- CPU: ")
        .append(model == null ? System.getProperty("os.arch") : model)
        .append(", ")
        .append(processors > 0 ? processors : Runtime.getRuntime().availableProcessors())
        .append(" logical processor(s)");
    String mhz = field(cpu, "cpu MHz");
    if (mhz != null) {
      b.append(", ").append(mhz).append(" MHz");
    }
    String cache = field(cpu, "cache size");
    if (cache != null) {
      b.append(", cache ").append(cache);
    }
    b.append(" (from /proc/cpuinfo)\n");
    String mem = field(lines(Path.of("/proc/meminfo")), "MemTotal");
    if (mem != null) {
      b.append("- Memory: ").append(mem).append('\n');
    }
    String clock =
        lines(Path.of("/sys/devices/system/clocksource/clocksource0/current_clocksource")).stream()
            .findFirst()
            .orElse(null);
    b.append("- OS: ")
        .append(System.getProperty("os.name"))
        .append(' ')
        .append(System.getProperty("os.version"))
        .append(clock == null ? "" : ", clock source " + clock)
        .append('\n');
    b.append("- `java -version`:\n\n```\n").append(javaVersion()).append("```\n");
    return b.toString();
  }

  private static String javaVersion() {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    try {
      Process p = new ProcessBuilder(java.toString(), "-version").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(30, TimeUnit.SECONDS);
      return out.endsWith("\n") ? out : out + "\n";
    } catch (IOException e) {
      return "java.version="
          + System.getProperty("java.version")
          + " (could not run java -version)\n";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "java.version=" + System.getProperty("java.version") + "\n";
    }
  }

  private static List<String> lines(Path p) {
    try {
      return Files.readAllLines(p);
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }

  private static String field(List<String> lines, String name) {
    return lines.stream()
        .filter(l -> l.startsWith(name))
        .map(l -> l.substring(l.indexOf(':') + 1).trim())
        .findFirst()
        .orElse(null);
  }

  /** The processors the JVM sees, for the log. */
  static String summary() {
    return Runtime.getRuntime().availableProcessors()
        + " processors, "
        + System.getProperty("java.vm.name")
        + " "
        + System.getProperty("java.version")
        + lines(Path.of("/proc/loadavg")).stream()
            .map(l -> ", load average " + l)
            .collect(Collectors.joining());
  }
}
