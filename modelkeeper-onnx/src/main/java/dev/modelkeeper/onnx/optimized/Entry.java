package dev.modelkeeper.onnx.optimized;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The record of one pre-optimized form, {@code entry.json}: what it was made from and the length
 * and CRC32C of each of its files. Immutable and thread-safe.
 *
 * @param key the entry's key (its folder's name)
 * @param sourceSha256 the SHA-256 of the model file it was made from
 * @param sourcePath the real path of that model file when the form was made
 * @param runtime ONNX Runtime's version
 * @param files each file of the form (by name, in its folder) with its length and CRC32C
 */
record Entry(
    String key,
    String sourceSha256,
    String sourcePath,
    String runtime,
    Map<String, Checked> files) {

  static final String FILE_NAME = "entry.json";
  private static final int FORMAT = 1;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One file's length and CRC32C. */
  record Checked(long bytes, long crc32c) {}

  /**
   * The record of the form in {@code folder}: its files (every regular file there but the record)
   * forced to disk, measured and checksummed.
   */
  static Entry describe(
      String key, String sourceSha256, String sourcePath, String runtime, Path folder)
      throws IOException {
    Map<String, Checked> files = new LinkedHashMap<>();
    try (Stream<Path> list = Files.list(folder)) {
      for (Path f : (Iterable<Path>) list.sorted()::iterator) {
        if (Files.isRegularFile(f) && !f.getFileName().toString().equals(FILE_NAME)) {
          files.put(f.getFileName().toString(), checksum(f, true));
        }
      }
    }
    return new Entry(key, sourceSha256, sourcePath, runtime, Map.copyOf(files));
  }

  /** Writes this record into {@code folder} and forces it to disk. */
  void writeTo(Path folder) throws IOException {
    ObjectNode root = JSON.createObjectNode();
    root.put("format", FORMAT);
    root.put("key", key);
    root.put("source_sha256", sourceSha256);
    root.put("source_path", sourcePath);
    root.put("runtime", runtime);
    ObjectNode fs = root.putObject("files");
    files.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(
            e -> {
              ObjectNode n = fs.putObject(e.getKey());
              n.put("bytes", e.getValue().bytes());
              n.put("crc32c", e.getValue().crc32c());
            });
    Path file = folder.resolve(FILE_NAME);
    Files.write(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
  }

  /**
   * Reads the record of the entry in {@code folder}.
   *
   * @throws IOException when it is missing, unreadable or not a record of this format
   */
  static Entry read(Path folder) throws IOException {
    JsonNode root = JSON.readTree(folder.resolve(FILE_NAME).toFile());
    if (root == null || root.path("format").asInt() != FORMAT || !root.path("files").isObject()) {
      throw new IOException("not an entry record of format " + FORMAT);
    }
    Map<String, Checked> files = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : root.get("files").properties()) {
      if (!e.getValue().path("bytes").canConvertToLong()
          || !e.getValue().path("crc32c").canConvertToLong()) {
        throw new IOException("the record of " + e.getKey() + " lacks its length or checksum");
      }
      files.put(
          e.getKey(),
          new Checked(e.getValue().get("bytes").asLong(), e.getValue().get("crc32c").asLong()));
    }
    return new Entry(
        root.path("key").asText(),
        root.path("source_sha256").asText(),
        root.path("source_path").asText(),
        root.path("runtime").asText(),
        Map.copyOf(files));
  }

  /**
   * Why the files in {@code folder} are not the ones recorded (a file missing, of another length or
   * checksum), or null when they are.
   */
  String mismatch(Path folder) throws IOException {
    for (Map.Entry<String, Checked> e : files.entrySet()) {
      Path f = folder.resolve(e.getKey());
      if (!Files.isRegularFile(f)) {
        return e.getKey() + " is missing";
      }
      long size = Files.size(f);
      if (size != e.getValue().bytes()) {
        return e.getKey() + " has " + size + " bytes, " + e.getValue().bytes() + " recorded";
      }
      if (checksum(f, false).crc32c() != e.getValue().crc32c()) {
        return e.getKey() + " does not have its recorded CRC32C";
      }
    }
    return null;
  }

  /** The length and CRC32C of {@code file}, forcing it to disk first when asked. */
  private static Checked checksum(Path file, boolean force) throws IOException {
    CRC32C crc = new CRC32C();
    long bytes = 0;
    try (FileChannel ch =
        FileChannel.open(
            file,
            force
                ? new StandardOpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE}
                : new StandardOpenOption[] {StandardOpenOption.READ})) {
      if (force) {
        ch.force(true);
      }
      ByteBuffer buf = ByteBuffer.allocate(1 << 16);
      for (int n; (n = ch.read(buf.clear())) >= 0; ) {
        crc.update(buf.flip());
        bytes += n;
      }
    }
    return new Checked(bytes, crc.getValue());
  }
}
