package dev.modelkeeper.server.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One loopback HTTP/1.1 connection driven byte by byte, for clients no well-behaved library would
 * be: slow, truncated, broken. Every read is bounded by a socket timeout. Not thread-safe.
 */
public final class RawHttp implements AutoCloseable {

  private static final Pattern LENGTH = Pattern.compile("(?i)\r\ncontent-length: *(\\d+)");

  private final Socket socket;

  private RawHttp(Socket socket) {
    this.socket = socket;
  }

  /** Connects to {@code 127.0.0.1:port}; reads time out after 10 s. */
  public static RawHttp connect(int port) throws IOException {
    return connect(port, Duration.ofSeconds(10));
  }

  /** Connects to {@code 127.0.0.1:port}; reads time out after {@code readTimeout}. */
  public static RawHttp connect(int port, Duration readTimeout) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout((int) readTimeout.toMillis());
    return new RawHttp(s);
  }

  /** Request line and headers for a {@code POST} with the given extra header lines. */
  public static String post(String path, String... headers) {
    StringBuilder b =
        new StringBuilder("POST ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (String h : headers) {
      b.append(h).append("\r\n");
    }
    return b.append("\r\n").toString();
  }

  /** Sends {@code text} (ISO-8859-1) at once. */
  public RawHttp send(String text) throws IOException {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  public RawHttp send(byte[] bytes) throws IOException {
    return send(bytes, 0, bytes.length);
  }

  public RawHttp send(byte[] bytes, int offset, int length) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(bytes, offset, length);
    out.flush();
    return this;
  }

  /** Half-closes: the server sees the end of the stream, and may still answer. */
  public RawHttp shutdownOutput() throws IOException {
    socket.shutdownOutput();
    return this;
  }

  /**
   * Reads one response; null when the server closed (or reset) the connection without answering.
   */
  public Response readResponse() throws IOException {
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    InputStream in = socket.getInputStream();
    byte[] buf = new byte[8192];
    try {
      for (int n; (n = in.read(buf)) > 0; ) {
        got.write(buf, 0, n);
        Response r = Response.parse(got.toString(StandardCharsets.UTF_8));
        if (r != null) {
          return r;
        }
      }
    } catch (SocketException reset) {
      // the server closed the connection abruptly: no (complete) answer
    }
    return Response.parse(got.toString(StandardCharsets.UTF_8));
  }

  /** True when the server has closed the connection (reads end-of-stream within 10 s). */
  public boolean closedByServer() throws IOException {
    try {
      InputStream in = socket.getInputStream();
      byte[] buf = new byte[1024];
      while (in.read(buf) >= 0) {
        // discard whatever is left
      }
      return true;
    } catch (SocketTimeoutException stillOpen) {
      return false;
    } catch (SocketException reset) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  /**
   * One response. Immutable and thread-safe.
   *
   * @param status the status code
   * @param head the status line and headers
   * @param body the body text
   */
  public record Response(int status, String head, String body) {

    static Response parse(String text) {
      int split = text.indexOf("\r\n\r\n");
      if (split < 0 || !text.startsWith("HTTP/1.1 ")) {
        return null;
      }
      String head = text.substring(0, split);
      Matcher m = LENGTH.matcher(head);
      int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
      if (text.length() < split + 4 + length) {
        return null;
      }
      return new Response(
          Integer.parseInt(text.substring(9, 12)),
          head,
          text.substring(split + 4, split + 4 + length));
    }

    /** The value of header {@code name}, or null. */
    public String header(String name) {
      for (String line : head.split("\r\n")) {
        int colon = line.indexOf(':');
        if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
          return line.substring(colon + 1).trim();
        }
      }
      return null;
    }

    public boolean isJson() {
      String type = header("Content-Type");
      return type != null && type.toLowerCase(Locale.ROOT).startsWith("application/json");
    }
  }
}
