package dev.modelkeeper.cli.readme;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a Markdown page (README.md, docs/PROTOCOL.md): its sections, fenced code blocks, and the
 * HTTP API examples (a {@code sh} block with a curl command followed by the block showing its
 * output). Immutable and thread-safe.
 */
public final class ReadmeExamples {

  /**
   * One fenced block. Immutable and thread-safe.
   *
   * @param language the info string after the opening fence, e.g. {@code sh} or {@code json}
   * @param text the block's lines, without the fences and without the list indentation
   */
  public record Block(String language, String text) {}

  /**
   * A documented command and the output the README shows for it. Immutable and thread-safe.
   *
   * @param command the shell command
   * @param language the output block's language ({@code json} or {@code text})
   * @param expected the output as shown
   */
  public record Example(String command, String language, String expected) {}

  private final List<String> lines;

  private ReadmeExamples(List<String> lines) {
    this.lines = lines;
  }

  public static ReadmeExamples read(Path readme) throws IOException {
    return new ReadmeExamples(Files.readAllLines(readme, StandardCharsets.UTF_8));
  }

  /** The fenced blocks under the level-2 heading {@code title}, up to the next level-2 heading. */
  public List<Block> blocks(String title) {
    List<Block> out = new ArrayList<>();
    boolean inSection = false;
    String language = null;
    String indent = "";
    StringBuilder text = null;
    for (String line : lines) {
      if (text == null && line.startsWith("## ")) {
        inSection = line.substring(3).trim().equals(title);
        continue;
      }
      if (!inSection) {
        continue;
      }
      String trimmed = line.trim();
      if (text == null && trimmed.startsWith("```")) {
        language = trimmed.substring(3).trim();
        indent = line.substring(0, line.indexOf("```"));
        text = new StringBuilder();
      } else if (text != null && trimmed.equals("```")) {
        out.add(new Block(language, text.toString()));
        text = null;
      } else if (text != null) {
        text.append(line.startsWith(indent) ? line.substring(indent.length()) : line).append('\n');
      }
    }
    if (text != null) {
      throw new IllegalStateException("unclosed code block in section '" + title + "'");
    }
    return out;
  }

  /** Every curl example of section {@code title}, paired with the output block after it. */
  public List<Example> examples(String title) {
    List<Block> blocks = blocks(title);
    List<Example> out = new ArrayList<>();
    for (int i = 0; i < blocks.size(); i++) {
      Block b = blocks.get(i);
      if (b.language().equals("sh") && b.text().startsWith("curl ")) {
        if (i + 1 >= blocks.size() || blocks.get(i + 1).language().equals("sh")) {
          throw new IllegalStateException("no output shown after: " + b.text());
        }
        Block shown = blocks.get(i + 1);
        out.add(new Example(b.text().trim(), shown.language(), shown.text()));
      }
    }
    return out;
  }
}
