package dev.modelkeeper.onnx.remote;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The file list of a remote model repository, served at {@code <base>/manifest.sha256}. Immutable
 * and thread-safe.
 *
 * <p>Format: UTF-8 text, one file per line, three fields separated by single spaces:
 *
 * <pre>
 * # lines starting with '#' and blank lines are ignored
 * &lt;sha256, 64 lowercase hex digits&gt; &lt;size in bytes&gt; &lt;path relative to the base URL&gt;
 * 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 4 iris/1/model.onnx
 * </pre>
 *
 * <p>Paths use {@code /}, have the form {@code <name>/<version>/<file>} and may not contain {@code
 * ..}, empty segments, backslashes or {@code %}. Each version must list {@code model.onnx}; its
 * {@code config.json} is optional. {@link #write(Path)} produces the manifest of a local repository
 * folder, so any static file server over that folder becomes a remote repository.
 */
public final class Manifest {

  /** The manifest's file name at the repository's base URL. */
  public static final String FILE_NAME = "manifest.sha256";

  private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern PATH =
      Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.\\-]*(/[A-Za-z0-9][A-Za-z0-9_.\\-]*)*");

  /**
   * One listed file. Immutable and thread-safe.
   *
   * @param path the path relative to the base URL
   * @param sha256 the lowercase hex SHA-256 of its content
   * @param size its length in bytes
   */
  public record Entry(String path, String sha256, long size) {}

  private final Map<String, Entry> entries;

  private Manifest(Map<String, Entry> entries) {
    this.entries = Collections.unmodifiableMap(entries);
  }

  /**
   * Parses manifest text.
   *
   * @throws IllegalArgumentException naming the first bad line
   */
  public static Manifest parse(String text) {
    Map<String, Entry> map = new LinkedHashMap<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split(" ", -1);
      if (f.length != 3) {
        throw bad(i, "expected '<sha256> <size> <path>'");
      }
      String sha = f[0].toLowerCase(Locale.ROOT);
      if (!HEX64.matcher(sha).matches()) {
        throw bad(i, "bad SHA-256 '" + f[0] + "'");
      }
      long size;
      try {
        size = Long.parseLong(f[1]);
      } catch (NumberFormatException e) {
        throw bad(i, "bad size '" + f[1] + "'");
      }
      if (size < 0) {
        throw bad(i, "negative size");
      }
      String path = f[2];
      if (!PATH.matcher(path).matches() || path.contains("..")) {
        throw bad(i, "bad path '" + path + "'");
      }
      if (map.put(path, new Entry(path, sha, size)) != null) {
        throw bad(i, "duplicate path '" + path + "'");
      }
    }
    return new Manifest(map);
  }

  /** The listed file at {@code path}, if any. */
  public Optional<Entry> entry(String path) {
    return Optional.ofNullable(entries.get(path));
  }

  /** Every listed file, in manifest order. */
  public List<Entry> entries() {
    return new ArrayList<>(entries.values());
  }

  /**
   * The manifest text of every regular file below {@code root} whose path is allowed in a manifest
   * (hidden files and the manifest itself are left out).
   */
  public static String write(Path root) {
    StringBuilder sb =
        new StringBuilder("# ModelKeeper repository manifest: <sha256> <size> <path>\n");
    List<Path> files;
    try (Stream<Path> walk = Files.walk(root)) {
      files =
          walk.filter(Files::isRegularFile)
              .filter(
                  p -> {
                    String rel = root.relativize(p).toString().replace('\\', '/');
                    return !rel.equals(FILE_NAME)
                        && PATH.matcher(rel).matches()
                        && !rel.contains("..");
                  })
              .sorted()
              .collect(Collectors.toList());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + root, e);
    }
    for (Path p : files) {
      String rel = root.relativize(p).toString().replace('\\', '/');
      try {
        sb.append(sha256(p)).append(' ').append(Files.size(p)).append(' ').append(rel).append('\n');
      } catch (IOException e) {
        throw new UncheckedIOException("cannot hash " + p, e);
      }
    }
    return sb.toString();
  }

  /** Writes {@link #write(Path)} to {@code root/manifest.sha256} and returns that file. */
  public static Path writeTo(Path root) {
    Path file = root.resolve(FILE_NAME);
    try {
      Files.writeString(file, write(root), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
    return file;
  }

  /** The lowercase hex SHA-256 of a file's content. */
  public static String sha256(Path file) throws IOException {
    MessageDigest md = newDigest();
    try (DigestInputStream in = new DigestInputStream(Files.newInputStream(file), md)) {
      byte[] buf = new byte[1 << 16];
      while (in.read(buf) >= 0) {
        // digesting
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK lacks SHA-256", e);
    }
  }

  private static IllegalArgumentException bad(int line, String what) {
    return new IllegalArgumentException("manifest line " + (line + 1) + ": " + what);
  }
}
