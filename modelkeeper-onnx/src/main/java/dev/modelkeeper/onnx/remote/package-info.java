/**
 * Remote model repositories over HTTP(S) and the disk cache their artifacts are downloaded into.
 *
 * <h2>Remote repository layout</h2>
 *
 * <p>A remote repository is any HTTP(S) server that serves, under one base URL, the same files as a
 * local repository plus a manifest:
 *
 * <pre>
 * &lt;base&gt;/manifest.sha256
 * &lt;base&gt;/&lt;name&gt;/&lt;version&gt;/model.onnx
 * &lt;base&gt;/&lt;name&gt;/&lt;version&gt;/config.json      (optional)
 * </pre>
 *
 * <h2>Manifest format ({@code manifest.sha256})</h2>
 *
 * <p>UTF-8 text; blank lines and lines starting with {@code #} are ignored; every other line lists
 * one file as three fields separated by single spaces:
 *
 * <pre>
 * &lt;SHA-256 of the content, 64 hex digits&gt; &lt;length in bytes&gt; &lt;path relative to the base URL&gt;
 * </pre>
 *
 * <p>Paths consist of segments of letters, digits, {@code _ . -} (not starting with a dot),
 * separated by {@code /}; {@code ..}, empty segments, {@code %}, backslashes and absolute paths are
 * rejected. The listing ({@code POST /v2/repository/index}) is derived from the manifest's {@code
 * model.onnx} entries; descriptions come from each version's {@code config.json}. Generate a
 * manifest for a local folder with {@link dev.modelkeeper.onnx.remote.Manifest#writeTo}; any static
 * file server over that folder then serves a remote repository.
 *
 * <h2>Downloads</h2>
 *
 * <p>{@link dev.modelkeeper.onnx.remote.ArtifactCache} stores artifacts by SHA-256 under {@code
 * <cache-dir>/sha256/}. One download per artifact across threads (single flight) and across
 * processes on the host (an OS file lock per artifact, re-checked after it is taken); the body goes
 * to a temporary file in the cache folder, its length and digest are verified, and only then is it
 * renamed into place atomically. Cached files are verified again before every use. The whole
 * download is bounded by a timeout; large downloads log their progress through {@code
 * System.Logger}. Failures are {@link dev.modelkeeper.onnx.remote.ArtifactDownloadException} and
 * its subtypes {@link dev.modelkeeper.onnx.remote.ArtifactIntegrityException} (wrong digest or
 * length, truncated body) and {@link dev.modelkeeper.onnx.remote.DownloadTimeoutException}.
 */
package dev.modelkeeper.onnx.remote;
