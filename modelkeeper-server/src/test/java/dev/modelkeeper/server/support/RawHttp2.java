package dev.modelkeeper.server.support;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * One loopback HTTP/2 connection (cleartext, prior knowledge) driven frame by frame, for gRPC
 * clients no library would be: ones that open calls and stop halfway through their message. Every
 * read is bounded by the socket timeout. Not thread-safe.
 */
public final class RawHttp2 implements AutoCloseable {

  private static final int DATA = 0x0;
  private static final int HEADERS = 0x1;
  private static final int RST_STREAM = 0x3;
  private static final int SETTINGS = 0x4;
  private static final int GOAWAY = 0x7;
  private static final int END_STREAM = 0x1;
  private static final int ACK = 0x1;
  private static final int END_HEADERS = 0x4;
  private static final int MAX_FRAME = 16_384;
  private static final short INITIAL_WINDOW_SIZE = 0x4;

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private int nextStream = 1;

  private RawHttp2(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new DataInputStream(socket.getInputStream());
    this.out = socket.getOutputStream();
  }

  /**
   * Connects to {@code 127.0.0.1:port}, sends the connection preface and reads until the server has
   * acknowledged it (so its flow-control windows apply); reads time out after {@code timeout}.
   */
  public static RawHttp2 connect(int port, Duration timeout) throws IOException {
    return connect(port, timeout, 65_535);
  }

  /**
   * As {@link #connect(int, Duration)}, granting the server a flow-control window of {@code window}
   * bytes per stream (0: it may send headers but no data, as a client that never reads).
   */
  public static RawHttp2 connect(int port, Duration timeout, int window) throws IOException {
    RawHttp2 c = new RawHttp2(new Socket("127.0.0.1", port));
    c.socket.setSoTimeout((int) timeout.toMillis());
    c.out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    c.frame(
        SETTINGS,
        0,
        0,
        ByteBuffer.allocate(6).putShort(INITIAL_WINDOW_SIZE).putInt(window).array());
    while (true) {
      Frame f = c.read();
      if (f == null) {
        throw new EOFException("the server closed the connection during the handshake");
      }
      if (f.type == SETTINGS && (f.flags & ACK) != 0) {
        return c;
      }
    }
  }

  /**
   * Opens a gRPC call to {@code path} by sending its headers only, plus {@code extra} (name, value,
   * name, value...) as given, upper case included; returns its stream id.
   */
  public int openCall(String path, String... extra) throws IOException {
    ByteArrayOutputStream block = new ByteArrayOutputStream();
    literal(block, ":method", "POST");
    literal(block, ":scheme", "http");
    literal(block, ":path", path);
    literal(block, ":authority", "127.0.0.1");
    literal(block, "content-type", "application/grpc");
    literal(block, "te", "trailers");
    for (int i = 0; i + 1 < extra.length; i += 2) {
      literal(block, extra[i], extra[i + 1]);
    }
    int stream = nextStream;
    nextStream += 2;
    frame(HEADERS, END_HEADERS, stream, block.toByteArray());
    return stream;
  }

  /**
   * Sends the start of a gRPC message on {@code stream}: the prefix declaring {@code declared}
   * bytes, then the first {@code sent} of them (zeros), without ending the stream.
   */
  public void sendPartialMessage(int stream, int declared, int sent) throws IOException {
    frame(DATA, 0, stream, ByteBuffer.allocate(5).put((byte) 0).putInt(declared).array());
    for (int at = 0; at < sent; at += MAX_FRAME) {
      frame(DATA, 0, stream, new byte[Math.min(MAX_FRAME, sent - at)]);
    }
  }

  /**
   * Sends {@code message} as one whole gRPC message on {@code stream} and ends the stream (stream
   * 0, the connection's own, is a protocol error).
   */
  public void sendMessage(int stream, byte[] message) throws IOException {
    ByteBuffer whole = ByteBuffer.allocate(5 + message.length).put((byte) 0).putInt(message.length);
    byte[] bytes = whole.put(message).array();
    for (int at = 0; at < bytes.length; at += MAX_FRAME) {
      int n = Math.min(MAX_FRAME, bytes.length - at);
      byte[] part = Arrays.copyOfRange(bytes, at, at + n);
      frame(DATA, at + n == bytes.length ? END_STREAM : 0, stream, part);
    }
  }

  /**
   * Reads until the server sends headers on {@code stream}; false when the connection closes first.
   *
   * @throws SocketTimeoutException when the read timeout passes first
   */
  public boolean awaitHeaders(int stream) throws IOException {
    while (true) {
      Frame f = read();
      if (f == null) {
        return false;
      }
      if (f.stream == stream && f.type == HEADERS) {
        return true;
      }
    }
  }

  /**
   * Reads until the server ends {@code stream} (trailers or a reset); false when the connection
   * closes first.
   *
   * @throws SocketTimeoutException when the read timeout passes first
   */
  public boolean awaitEnd(int stream) throws IOException {
    while (true) {
      Frame f = read();
      if (f == null) {
        return false;
      }
      if (f.stream == stream
          && (f.type == RST_STREAM || (f.type == HEADERS && (f.flags & END_STREAM) != 0))) {
        return true;
      }
    }
  }

  /** True when the server closes the connection (GOAWAY or end of stream) before the timeout. */
  public boolean closedByServer() throws IOException {
    while (true) {
      Frame f = read();
      if (f == null || f.type == GOAWAY) {
        return true;
      }
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  /** The next frame, its server SETTINGS acknowledged; null at the end of the connection. */
  private Frame read() throws IOException {
    byte[] head = new byte[9];
    try {
      in.readFully(head);
    } catch (EOFException e) {
      return null;
    }
    int length = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
    Frame f =
        new Frame(
            head[3] & 0xff, head[4] & 0xff, ByteBuffer.wrap(head, 5, 4).getInt() & ~(1 << 31));
    in.readFully(new byte[length]);
    if (f.type == SETTINGS && (f.flags & ACK) == 0) {
      frame(SETTINGS, ACK, 0, new byte[0]);
    }
    return f;
  }

  private void frame(int type, int flags, int stream, byte[] payload) throws IOException {
    ByteBuffer head = ByteBuffer.allocate(9);
    head.put((byte) (payload.length >>> 16)).put((byte) (payload.length >>> 8));
    head.put((byte) payload.length).put((byte) type).put((byte) flags).putInt(stream);
    out.write(head.array());
    out.write(payload);
    out.flush();
  }

  /** An HPACK literal header field without indexing, new name, no Huffman coding (short only). */
  private static void literal(ByteArrayOutputStream block, String name, String value) {
    block.write(0);
    for (String s : new String[] {name, value}) {
      byte[] b = s.getBytes(StandardCharsets.US_ASCII);
      if (b.length > 126) {
        throw new IllegalArgumentException("header too long for this client: " + s);
      }
      block.write(b.length);
      block.write(b, 0, b.length);
    }
  }

  private record Frame(int type, int flags, int stream) {}
}
