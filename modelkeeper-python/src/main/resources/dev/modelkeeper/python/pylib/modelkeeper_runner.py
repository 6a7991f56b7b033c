"""One instance of a Triton Python-backend model, as a child process of ModelKeeper.

    python3 modelkeeper_runner.py MODEL_PY

Messages from the server arrive on stdin, answers leave on the stdout the process started with
(the model's own prints go to stderr, which the server logs): each a 4-byte big-endian length
and that much UTF-8 JSON. Tensors travel through two shared-memory files: the server writes a
call's inputs into the one it names, this process writes the outputs into the other and says
how large it is.
"""
import asyncio
import importlib.util
import inspect
import json
import mmap
import os
import sys
import traceback

import numpy as np

import triton_python_backend_utils as pb_utils

_out = os.fdopen(os.dup(1), "wb", buffering=0)
os.dup2(2, 1)  # print() in model.py goes to the log, not into the answers
sys.stdout = sys.stderr
_in = os.fdopen(os.dup(0), "rb", buffering=0)


def read_message():
    head = _in.read(4)
    if len(head) < 4:
        return None
    n = int.from_bytes(head, "big")
    body = b""
    while len(body) < n:
        chunk = _in.read(n - len(body))
        if not chunk:
            return None
        body += chunk
    return json.loads(body.decode("utf-8"))


def write_message(message):
    body = json.dumps(message).encode("utf-8")
    _out.write(len(body).to_bytes(4, "big") + body)


def last_line(e):
    """The error's last line, and where in model.py it was raised when it was."""
    lines = traceback.format_exception_only(type(e), e)
    text = lines[-1].strip() if lines else repr(e)
    model_py = os.path.abspath(sys.argv[1])
    where = [f for f in traceback.extract_tb(e.__traceback__) if os.path.abspath(f.filename) == model_py]
    if where:
        f = where[-1]
        text += " (%s line %d, in %s)" % (os.path.basename(f.filename), f.lineno, f.name)
    return text


def log_traceback():
    """The traceback, one line each, at the server's DEBUG level."""
    for line in traceback.format_exc().splitlines():
        sys.stderr.write("VERBOSE " + line + "\n")
    sys.stderr.flush()


class Region:
    """A shared-memory file mapped into this process."""

    def __init__(self, path):
        self.path = path
        self.map = None
        self.size = 0

    def view(self, size):
        if self.map is None or self.size < size:
            if self.map is not None:
                self.map.close()
            with open(self.path, "r+b") as f:
                self.size = os.fstat(f.fileno()).st_size
                self.map = mmap.mmap(f.fileno(), self.size)
        return self.map

    def ensure(self, size):
        """Grows the file to at least size bytes (writers only)."""
        if self.map is None or self.size < size:
            if self.map is not None:
                self.map.close()
            grown = max(size, 2 * self.size, 1 << 16)
            with open(self.path, "r+b") as f:
                f.truncate(grown)
                self.map = mmap.mmap(f.fileno(), grown)
                self.size = grown
        return self.map


def tensor_in(region, spec):
    name, datatype, shape = spec["name"], spec["datatype"], spec["shape"]
    start, length = spec["offset"], spec["length"]
    data = region.map[start:start + length] if length else b""
    if datatype == "BYTES":
        array = pb_utils.deserialize_bytes_tensor(data).reshape(shape)
    else:
        array = np.frombuffer(data, dtype=pb_utils.triton_string_to_numpy(datatype)).reshape(shape)
    return pb_utils.Tensor(name, array)


def write_tensors(tensors, region, offset):
    """Writes tensors into region (grown as needed) from offset; their specs and the end."""
    specs = []
    for t in tensors:
        array = t.as_numpy()
        datatype = pb_utils.numpy_to_triton_type(array.dtype)
        if datatype is None:
            raise pb_utils.TritonModelException(
                "tensor '%s' has numpy type %s, which has no Triton data type" % (t.name(), array.dtype))
        data = (pb_utils.serialize_byte_tensor(array) if datatype == "BYTES"
                else np.ascontiguousarray(array).tobytes())
        region.ensure(offset + len(data))[offset:offset + len(data)] = data
        specs.append({"name": t.name(), "datatype": datatype, "shape": list(array.shape),
                      "offset": offset, "length": len(data)})
        offset += len(data)
    return specs, offset


def tensors_in(region, specs, copy):
    out = []
    for spec in specs:
        t = tensor_in(region, spec)
        out.append(pb_utils.Tensor(t.name(), t.as_numpy().copy()) if copy else t)
    return out


class Caller:
    """InferenceRequest.exec: the request's inputs into this process's output region (free until
    execute returns), a message to the server, its outputs back through the server's BLS region."""

    def __init__(self, out_region, bls_region):
        self.out_region = out_region
        self.bls_region = bls_region

    def __call__(self, request):
        specs, _ = write_tensors(request.inputs(), self.out_region, 0)
        version = request.model_version()
        write_message({"op": "infer", "model_name": request.model_name(),
                       "model_version": "" if version in (None, -1, "-1", "") else str(version),
                       "requested_outputs": request.requested_output_names(),
                       "inputs": specs, "output_size": self.out_region.size})
        answer = read_message()
        if answer is None:
            sys.exit(0)  # the server is gone
        if not answer.get("ok"):
            return pb_utils.InferenceResponse(error=pb_utils.TritonError(answer.get("error", "failed")))
        self.bls_region.view(answer["bls_size"])
        return pb_utils.InferenceResponse(output_tensors=tensors_in(self.bls_region, answer["outputs"], True))


def main():
    spec = importlib.util.spec_from_file_location("model", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    model = None
    in_region = out_region = None
    while True:
        message = read_message()
        if message is None:
            break
        op = message["op"]
        try:
            if op == "initialize":
                in_region = Region(message["input_shm"])
                out_region = Region(message["output_shm"])
                pb_utils._CALLER = Caller(out_region, Region(message["bls_shm"]))
                spec.loader.exec_module(module)
                cls = getattr(module, "TritonPythonModel", None)
                if cls is None:
                    raise pb_utils.TritonModelException("model.py defines no class TritonPythonModel")
                config = json.loads(message["args"]["model_config"])
                if hasattr(cls, "auto_complete_config"):
                    completed = cls.auto_complete_config(pb_utils.ModelConfig(config))
                    if completed is not None:
                        config = completed.as_dict()
                    message["args"]["model_config"] = json.dumps(config)
                model = cls()
                if hasattr(model, "initialize"):
                    model.initialize(message["args"])
                write_message({"ok": True, "model_config": message["args"]["model_config"]})
            elif op == "execute":
                in_region.view(message["input_size"])
                requests = []
                for r in message["requests"]:
                    requests.append(pb_utils.InferenceRequest(
                        inputs=[tensor_in(in_region, t) for t in r["inputs"]],
                        requested_output_names=r["requested_outputs"],
                        request_id=r.get("id", ""), parameters=r.get("parameters", "{}")))
                responses = model.execute(requests)
                if inspect.iscoroutine(responses):  # async def execute, awaiting async_exec calls
                    responses = asyncio.run(responses)
                if responses is None or len(responses) != len(requests):
                    raise pb_utils.TritonModelException(
                        "execute returned %s responses for %d requests"
                        % ("no" if responses is None else len(responses), len(requests)))
                answers, offset = [], 0
                for request, response in zip(message["requests"], responses):
                    if response.has_error():
                        answers.append({"error": str(response.error().message()),
                                        "code": response.error().code()})
                        continue
                    wanted = request["requested_outputs"]
                    specs, offset = write_tensors(
                        [t for t in response.output_tensors() if not wanted or t.name() in wanted],
                        out_region, offset)
                    answers.append({"outputs": specs})
                write_message({"ok": True, "responses": answers, "output_size": out_region.size})
            elif op == "finalize":
                if model is not None and hasattr(model, "finalize"):
                    model.finalize()
                write_message({"ok": True})
                break
        except Exception as e:  # the model's error, answered; the process carries on
            log_traceback()
            write_message({"ok": False, "error": last_line(e)})
            if op == "initialize":
                break


if __name__ == "__main__":
    main()
