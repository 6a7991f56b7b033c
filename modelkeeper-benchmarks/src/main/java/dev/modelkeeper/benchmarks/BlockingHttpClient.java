package dev.modelkeeper.benchmarks;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A load generator's HTTP/1.1 client: one keep-alive connection over a plain {@link Socket}, on
 * which the calling thread writes each request and reads its response itself, as closed-loop load
 * tools do. No selector or executor thread sits between the caller and the socket, so a round trip
 * costs the server's time plus two socket wake-ups, not the several thread hand-offs of a
 * general-purpose asynchronous client. Only what the benchmarks need: POST with a body; responses
 * framed by {@code Content-Length} or chunked; a connection the server closed is opened again once.
 * Not thread-safe: one instance per client thread.
 */
public final class BlockingHttpClient implements Closeable {

  /**
   * A response.
   *
   * @param status the status code
   * @param headers the headers, names in lower case (the last value of a repeated header)
   * @param body the body
   */
  public record Response(int status, Map<String, String> headers, byte[] body) {
    /** The value of header {@code name} (any case), or null. */
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private static final int MAX_HEADER_LINE = 16 * 1024;

  private final String host;
  private final int port;
  private final int timeoutMillis;
  private Socket socket;
  private InputStream in;
  private OutputStream out;

  /** A client of {@code host:port}; every connect and read gives up after {@code timeout}. */
  public BlockingHttpClient(String host, int port, Duration timeout) {
    this.host = host;
    this.port = port;
    this.timeoutMillis = Math.toIntExact(timeout.toMillis());
  }

  /**
   * POSTs {@code body} to {@code path} with {@code headers} (besides {@code Host} and {@code
   * Content-Length}) and reads the whole response.
   *
   * @throws IOException when the connection fails or the response is malformed
   */
  public Response post(String path, Map<String, String> headers, byte[] body) throws IOException {
    return send("POST", path, headers, body);
  }

  /**
   * GETs {@code path} and reads the whole response.
   *
   * @throws IOException when the connection fails or the response is malformed
   */
  public Response get(String path) throws IOException {
    return send("GET", path, Map.of(), null);
  }

  private Response send(String method, String path, Map<String, String> headers, byte[] body)
      throws IOException {
    StringBuilder head = new StringBuilder(128);
    head.append(method).append(' ').append(path).append(" HTTP/1.1\r\n");
    head.append("Host: ").append(host).append(':').append(port).append("\r\n");
    if (body != null) {
      head.append("Content-Length: ").append(body.length).append("\r\n");
    }
    headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
    head.append("\r\n");
    byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
    boolean reused = socket != null;
    try {
      return exchange(headBytes, body);
    } catch (EOFException | java.net.SocketException e) {
      if (!reused) {
        throw e;
      }
      // the server closed an idle keep-alive connection before this request reached it
      close();
      return exchange(headBytes, body);
    }
  }

  private Response exchange(byte[] head, byte[] body) throws IOException {
    if (socket == null) {
      connect();
    }
    out.write(head);
    if (body != null) {
      out.write(body);
    }
    out.flush();
    String status = line();
    if (status == null) {
      throw new EOFException("the server closed the connection before answering");
    }
    String[] parts = status.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP/1.x status line: " + status);
    }
    int code = Integer.parseInt(parts[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String h = line(); h != null && !h.isEmpty(); h = line()) {
      int colon = h.indexOf(':');
      if (colon <= 0) {
        throw new IOException("malformed header line: " + h);
      }
      headers.put(
          h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
    }
    byte[] content;
    String length = headers.get("content-length");
    if (length != null) {
      content = exactly(Integer.parseInt(length));
    } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      content = chunked();
    } else {
      content = in.readAllBytes(); // framed by the end of the connection
      headers.put("connection", "close");
    }
    if ("close".equalsIgnoreCase(headers.get("connection"))) {
      close();
    }
    return new Response(code, headers, content);
  }

  private void connect() throws IOException {
    Socket s = new Socket();
    try {
      s.setTcpNoDelay(true);
      s.setSoTimeout(timeoutMillis);
      s.connect(new InetSocketAddress(host, port), timeoutMillis);
      in = new BufferedInputStream(s.getInputStream(), 64 * 1024);
      out = new BufferedOutputStream(s.getOutputStream(), 64 * 1024);
    } catch (IOException e) {
      s.close();
      throw e;
    }
    socket = s;
  }

  /** One header line without its CRLF; null at the end of the stream before any byte. */
  private String line() throws IOException {
    StringBuilder sb = new StringBuilder(64);
    while (true) {
      int b = in.read();
      if (b < 0) {
        if (sb.length() == 0) {
          return null;
        }
        throw new EOFException("the connection ended inside a header line");
      }
      if (b == '\n') {
        int n = sb.length();
        return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
      }
      if (sb.length() >= MAX_HEADER_LINE) {
        throw new IOException("a header line is longer than " + MAX_HEADER_LINE + " bytes");
      }
      sb.append((char) b);
    }
  }

  private byte[] exactly(int n) throws IOException {
    byte[] b = in.readNBytes(n);
    if (b.length != n) {
      throw new EOFException("the body ended after " + b.length + " of " + n + " bytes");
    }
    return b;
  }

  private byte[] chunked() throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      String size = line();
      if (size == null) {
        throw new EOFException("the connection ended inside a chunked body");
      }
      int semi = size.indexOf(';');
      int n = Integer.parseInt((semi >= 0 ? size.substring(0, semi) : size).trim(), 16);
      if (n == 0) {
        for (String trailer = line(); trailer != null && !trailer.isEmpty(); trailer = line()) {
          // trailers are not used
        }
        return body.toByteArray();
      }
      body.write(exactly(n));
      if (!"".equals(line())) {
        throw new IOException("a chunk does not end with CRLF");
      }
    }
  }

  /** Closes the connection; the next request opens a new one. */
  @Override
  public void close() throws IOException {
    Socket s = socket;
    socket = null;
    in = null;
    out = null;
    if (s != null) {
      s.close();
    }
  }
}
