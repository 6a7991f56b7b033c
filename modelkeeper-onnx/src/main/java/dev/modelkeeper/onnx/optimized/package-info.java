/**
 * Pre-optimized forms of model files, kept on disk so that a model loads without ONNX Runtime
 * parsing its protobuf weights and optimizing its graph again.
 *
 * <h2>What a form is</h2>
 *
 * <p>The graph ONNX Runtime would build from a model file with ModelKeeper's session options,
 * written by ONNX Runtime itself ({@code SessionOptions.setOptimizedModelFilePath}) as an ONNX file
 * whose initializers of 1 KiB or more sit in a file beside it ({@code
 * session.optimized_model_external_initializers_file_name}). A session on the form is created with
 * graph optimizations off (they are applied already), and ONNX Runtime reads the initializers from
 * the side file without a protobuf copy of them.
 *
 * <h2>Layout</h2>
 *
 * <pre>
 * &lt;dir&gt;/&lt;key&gt;/model.onnx          the optimized graph
 * &lt;dir&gt;/&lt;key&gt;/model.onnx.data     its initializers
 * &lt;dir&gt;/&lt;key&gt;/entry.json          written last: what the form was made from, each file's length
 *                                 and CRC32C
 * &lt;dir&gt;/&lt;key&gt;.lock                OS file lock, held while the form is built
 * &lt;dir&gt;/&lt;key&gt;.&lt;random&gt;.part/      a form being built
 * </pre>
 *
 * <p>The key is the SHA-256 of: the model file's SHA-256, ONNX Runtime's version, the processor
 * (architecture and instruction-set flags: a form optimized at the highest level may hold kernels
 * for this processor only), the session options and this layout's version. A changed model file, a
 * new runtime or other options therefore name another entry; an entry is never updated in place.
 *
 * <h2>Rules (those of the artifact cache)</h2>
 *
 * <ul>
 *   <li>A form is built as a side effect of an ordinary load of the model file, into a {@code
 *       .part} folder; once the session exists, the files are forced to disk, their lengths and
 *       CRC32C recorded in {@code entry.json}, and the folder is renamed into place atomically, on
 *       a background thread, off the load's path. A half-written form is never under its final
 *       name.
 *   <li>Before its first use in a process, an entry's files are checked against {@code entry.json}
 *       (length and CRC32C), on the builder's thread; a load reads an entry only once it passed,
 *       and only while its files are the ones checked (device, inode, length, modification and
 *       change time), so nothing is hashed on a load's path and the first load of a model file in a
 *       process reads the model file. An entry that fails is deleted and built again; a session
 *       that cannot be created from a form falls back to the model file.
 *   <li>One build per entry across the processes of a host: the builder holds an OS file lock on
 *       {@code <key>.lock} and checks for the entry again once it holds it. A load that finds the
 *       lock held, by another process or another thread, loads the model file and builds nothing.
 *   <li>When a form is published, the entries made from an earlier content of the same model file
 *       are deleted. Clearing the folder at any time is safe: loads then read the model files.
 * </ul>
 */
package dev.modelkeeper.onnx.optimized;
