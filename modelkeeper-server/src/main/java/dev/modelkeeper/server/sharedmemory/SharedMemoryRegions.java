package dev.modelkeeper.server.sharedmemory;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.request.SharedMemoryRef;
import dev.modelkeeper.server.request.TensorInputs;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The system shared memory regions clients have registered: each a named window ({@code offset},
 * {@code byte_size}) of a file under {@value #ROOT}, mapped once at registration. Thread-safe.
 *
 * <p>Rules: a key names a file directly under {@value #ROOT} (no path separator past a leading one,
 * no {@code ..}, no symbolic link); only a client on a loopback address may register, so a remote
 * client can never have the server read another process's memory into a model and back out; the
 * mapped bytes of all regions together stay within a bound; every tensor's offset and size are
 * checked against its region before a byte is touched.
 *
 * <p>Lifetime: a region is used only while an input is copied out of it or an output written into
 * it, between {@link Region#enter} and {@link Region#exit}. Unregistering removes the name at once
 * and unmaps the region when its last such use ends, so a region unregistered while a request reads
 * it never faults: the request either finished its copy first or finds the region gone (400).
 */
public final class SharedMemoryRegions implements AutoCloseable {

  /** Where regions live: POSIX shared memory as Linux exposes it. */
  public static final String ROOT = "/dev/shm";

  /** The most bytes one region may map (one mapped buffer's limit). */
  static final long MAX_REGION_BYTES = Integer.MAX_VALUE - 8;

  private static final System.Logger LOG = System.getLogger(SharedMemoryRegions.class.getName());

  /**
   * A registered region as its status reports it.
   *
   * @param name the name it was registered under
   * @param key the shared memory key, e.g. {@code /input_data}
   * @param offset where the region starts in the key's file
   * @param byteSize its length in bytes
   */
  public record Status(String name, String key, long offset, long byteSize) {}

  private final Path root;
  private final long maxMappedBytes;
  private final ConcurrentHashMap<String, Region> regions = new ConcurrentHashMap<>();

  // @GuardedBy("this")
  private long mapped;

  // @GuardedBy("this")
  private boolean closed;

  /** Regions under {@value #ROOT}, at most {@code maxMappedBytes} of them mapped at once. */
  public SharedMemoryRegions(long maxMappedBytes) {
    this(Path.of(ROOT), maxMappedBytes);
  }

  SharedMemoryRegions(Path root, long maxMappedBytes) {
    this.root = root;
    this.maxMappedBytes = maxMappedBytes;
  }

  /**
   * Maps {@code byteSize} bytes at {@code offset} of shared memory {@code key} as region {@code
   * name}, for a client at {@code peer}.
   *
   * @throws SharedMemoryException 403 when {@code peer} is not a loopback address; 409 when the
   *     name is taken; 413 when the bound on mapped bytes would be passed; 400 for a bad key, a
   *     window past the end of the memory, or memory that cannot be mapped
   */
  public void register(String name, String key, long offset, long byteSize, InetAddress peer) {
    if (peer == null || !peer.isLoopbackAddress()) {
      throw new SharedMemoryException(
          Failure.Kind.FORBIDDEN,
          "shared memory can be registered only by a client on this machine (a loopback address); "
              + (peer == null
                  ? "the client's address is unknown"
                  : peer.getHostAddress() + " is not"));
    }
    if (name == null || name.isEmpty()) {
      throw SharedMemoryException.bad("a shared memory region needs a name");
    }
    Path file = file(key);
    if (offset < 0 || byteSize <= 0 || byteSize > MAX_REGION_BYTES) {
      throw SharedMemoryException.bad(
          "region '"
              + name
              + "': offset must be non-negative and byte_size from 1 to "
              + MAX_REGION_BYTES
              + ", were "
              + offset
              + " and "
              + byteSize);
    }
    reserve(name, byteSize);
    MappedByteBuffer buffer;
    try {
      buffer = map(name, key, file, offset, byteSize);
    } catch (RuntimeException e) {
      unreserve(byteSize);
      throw e;
    }
    Region region = new Region(name, key, offset, byteSize, buffer);
    if (regions.putIfAbsent(name, region) != null) {
      unreserve(byteSize);
      Unmapper.unmap(buffer);
      throw new SharedMemoryException(
          Failure.Kind.CONFLICT, "shared memory region '" + name + "' is already registered");
    }
    LOG.log(Level.DEBUG, "registered shared memory region {0}: {1} bytes", name, byteSize);
  }

  private synchronized void reserve(String name, long byteSize) {
    if (closed) {
      throw SharedMemoryException.bad("the server is stopping");
    }
    if (regions.containsKey(name)) {
      throw new SharedMemoryException(
          Failure.Kind.CONFLICT, "shared memory region '" + name + "' is already registered");
    }
    if (mapped + byteSize > maxMappedBytes) {
      throw new SharedMemoryException(
          Failure.Kind.TOO_LARGE,
          "region '"
              + name
              + "' of "
              + byteSize
              + " bytes would pass max-shared-memory-bytes="
              + maxMappedBytes
              + " ("
              + mapped
              + " bytes are mapped); unregister regions or raise the setting");
    }
    mapped += byteSize;
  }

  private synchronized void unreserve(long byteSize) {
    mapped -= byteSize;
  }

  /** The file of {@code key} directly under the root, refusing anything else. */
  private Path file(String key) {
    String k = key == null ? "" : key.startsWith("/") ? key.substring(1) : key;
    if (k.isEmpty()
        || k.equals(".")
        || k.contains("..")
        || k.indexOf('/') >= 0
        || k.indexOf('\\') >= 0
        || k.indexOf('\0') >= 0) {
      throw SharedMemoryException.bad(
          "shared memory key '"
              + key
              + "' must name memory directly under "
              + ROOT
              + " (e.g. /my_region), without another '/' or '..'");
    }
    return root.resolve(k);
  }

  private static MappedByteBuffer map(
      String name, String key, Path file, long offset, long byteSize) {
    try {
      BasicFileAttributes a =
          Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!a.isRegularFile()) {
        throw SharedMemoryException.bad(
            "shared memory key '" + key + "' is not shared memory under " + ROOT);
      }
      if (offset + byteSize > a.size()) {
        throw SharedMemoryException.bad(
            "region '"
                + name
                + "' ends at byte "
                + (offset + byteSize)
                + " but shared memory '"
                + key
                + "' has "
                + a.size()
                + " bytes");
      }
      try (FileChannel ch =
          FileChannel.open(
              file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
        return ch.map(FileChannel.MapMode.READ_WRITE, offset, byteSize);
      }
    } catch (NoSuchFileException e) {
      throw SharedMemoryException.bad(
          "shared memory key '" + key + "' does not exist under " + ROOT);
    } catch (IOException | UnsupportedOperationException e) {
      throw SharedMemoryException.bad(
          "cannot map shared memory key '" + key + "': " + e.getMessage());
    }
  }

  /** Unregisters region {@code name}; no-op when it is not registered. */
  public void unregister(String name) {
    Region r = regions.remove(name);
    if (r != null) {
      retire(r);
    }
  }

  /** Unregisters every region. */
  public void unregisterAll() {
    for (String name : List.copyOf(regions.keySet())) {
      unregister(name);
    }
  }

  private void retire(Region r) {
    if (r.retire()) {
      unreserve(r.byteSize);
    }
  }

  /**
   * The status of region {@code name}, or of every region when {@code name} is null or empty.
   *
   * @throws SharedMemoryException 400 when {@code name} is not registered
   */
  public List<Status> status(String name) {
    List<Status> out = new ArrayList<>();
    if (name == null || name.isEmpty()) {
      regions.values().forEach(r -> out.add(r.status()));
      out.sort((a, b) -> a.name().compareTo(b.name()));
      return out;
    }
    out.add(region(name, "status").status());
    return out;
  }

  /** The bytes the registered regions map now. */
  public synchronized long mappedBytes() {
    return mapped;
  }

  /**
   * Input {@code input} read from {@code ref}: its bytes copied out of the region (so that the
   * region may be unregistered while the model runs), then checked as binary tensor data.
   */
  public Tensor read(String input, Datatype datatype, long[] shape, SharedMemoryRef ref) {
    String where = "input '" + input + "'";
    Region r = enter(ref, where);
    try {
      ByteBuffer window = r.window(ref, where);
      // fixed-size elements are handed to the runtime in place from a direct buffer; BYTES
      // elements are decoded into strings, from the heap
      ByteBuffer copy =
          datatype.elementBytes() > 0
              ? ByteBuffer.allocateDirect(window.remaining())
              : ByteBuffer.allocate(window.remaining());
      copy.put(window).flip();
      return TensorInputs.read(input, datatype, shape, copy.order(ByteOrder.LITTLE_ENDIAN));
    } finally {
      r.exit();
    }
  }

  /**
   * Writes {@code output}'s binary form at {@code ref}; answers the bytes written.
   *
   * @throws SharedMemoryException 400 when it does not fit {@code ref} or the region
   */
  public long write(Tensor output, SharedMemoryRef ref) {
    String where = "output '" + output.name() + "'";
    long size = output.datatype().binarySize(output.data());
    if (size > ref.byteSize()) {
      throw SharedMemoryException.bad(
          where
              + " takes "
              + size
              + " bytes but "
              + SharedMemoryRef.BYTE_SIZE
              + " gives it "
              + ref.byteSize());
    }
    Region r = enter(ref, where);
    try {
      output.datatype().toBinary(output.data(), r.window(ref, where));
      return size;
    } finally {
      r.exit();
    }
  }

  private Region region(String name, String where) {
    Region r = regions.get(name);
    if (r == null) {
      throw SharedMemoryException.bad(
          where + ": shared memory region '" + name + "' is not registered");
    }
    return r;
  }

  private Region enter(SharedMemoryRef ref, String where) {
    Region r = region(ref.region(), where);
    if (!r.enter()) {
      throw SharedMemoryException.bad(
          where + ": shared memory region '" + ref.region() + "' was unregistered");
    }
    return r;
  }

  /** Unregisters and unmaps every region; later registrations are refused. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    unregisterAll();
  }

  /** One mapped region and its users. Thread-safe. */
  private static final class Region {
    final String name;
    final String key;
    final long offset;
    final long byteSize;
    private final MappedByteBuffer buffer;

    // @GuardedBy("this")
    private int users;

    // @GuardedBy("this")
    private boolean retired;

    Region(String name, String key, long offset, long byteSize, MappedByteBuffer buffer) {
      this.name = name;
      this.key = key;
      this.offset = offset;
      this.byteSize = byteSize;
      this.buffer = buffer;
    }

    Status status() {
      return new Status(name, key, offset, byteSize);
    }

    /** A view of {@code ref}'s bytes, little-endian, checked against the region. */
    ByteBuffer window(SharedMemoryRef ref, String where) {
      if (ref.offset() > byteSize || ref.byteSize() > byteSize - ref.offset()) {
        throw SharedMemoryException.bad(
            where
                + ": bytes "
                + ref.offset()
                + " to "
                + (ref.offset() + ref.byteSize())
                + " lie past the end of shared memory region '"
                + name
                + "' ("
                + byteSize
                + " bytes)");
      }
      return buffer.slice((int) ref.offset(), (int) ref.byteSize()).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Begins a use; false when the region was unregistered. */
    synchronized boolean enter() {
      if (retired) {
        return false;
      }
      users++;
      return true;
    }

    /** Ends a use; the last one after {@link #retire} unmaps. */
    void exit() {
      boolean unmap;
      synchronized (this) {
        unmap = --users == 0 && retired;
      }
      if (unmap) {
        Unmapper.unmap(buffer);
      }
    }

    /** Marks the region unregistered, unmapping it now when unused; true the first time. */
    boolean retire() {
      boolean unmap;
      synchronized (this) {
        if (retired) {
          return false;
        }
        retired = true;
        unmap = users == 0;
      }
      if (unmap) {
        Unmapper.unmap(buffer);
      }
      return true;
    }
  }
}
