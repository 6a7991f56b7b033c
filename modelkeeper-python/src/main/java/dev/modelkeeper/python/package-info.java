/**
 * Triton's Python backend as a {@link dev.modelkeeper.onnx.ModelBackend}: {@code model.py} files
 * run unchanged as child processes of the server. {@link dev.modelkeeper.python.PythonBackend} is
 * the service; {@code PythonModel} is one model version (its instances, their restarts, its
 * measured cost); {@code PythonProcess} is one instance (the child, its pipes and shared-memory
 * regions, its timeouts). The Python side is {@code pylib/modelkeeper_runner.py} and ModelKeeper's
 * own {@code triton_python_backend_utils.py}, written into a temporary folder at first use.
 */
package dev.modelkeeper.python;
