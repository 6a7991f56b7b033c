package dev.modelkeeper.benchmarks.request;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection to a server on 127.0.0.1 that sends whole prepared requests
 * and reads their answers, so a harness's client does no work beyond the bytes. Not thread-safe:
 * one request at a time.
 */
final class LoopbackHttp implements AutoCloseable {
  private final Socket socket;
  private final OutputStream out;
  private final InputStream in;

  LoopbackHttp(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(60_000);
    out = socket.getOutputStream();
    in = socket.getInputStream();
  }

  /** A whole POST of {@code body} to {@code path}, with {@code extraHeaders} (each ending CRLF). */
  static byte[] post(String path, String contentType, String extraHeaders, byte[] body) {
    byte[] head =
        ("POST "
                + path
                + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                + contentType
                + "\r\n"
                + extraHeaders
                + "Content-Length: "
                + body.length
                + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[head.length + body.length];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(body, 0, all, head.length, body.length);
    return all;
  }

  /** Sends {@code request} and reads its whole answer; fails unless it is a 200. */
  void send(byte[] request) throws IOException {
    out.write(request);
    out.flush();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("the server closed the connection");
      }
      head.write(c);
      matched = c == "\r\n\r\n".charAt(matched) ? matched + 1 : (c == '\r' ? 1 : 0);
    }
    String headers = head.toString(StandardCharsets.US_ASCII);
    if (!headers.startsWith("HTTP/1.1 200")) {
      throw new IOException("not a 200: " + headers.lines().findFirst().orElse(""));
    }
    int length = -1;
    for (String line : headers.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    if (length < 0) {
      throw new IOException("no Content-Length: " + headers);
    }
    in.readNBytes(length);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
