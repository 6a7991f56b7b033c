"""The module a Triton Python-backend model imports as pb_utils, as ModelKeeper provides it.

Written from Triton's documented API: tensors, requests, responses, errors, the model
configuration helpers and a logger. A model runs in a child process of the server
(modelkeeper_runner.py); tensors arrive in and leave through shared memory.
"""
import json
import sys

import numpy as np

_TRITON_TO_NUMPY = {
    "TYPE_BOOL": np.bool_, "BOOL": np.bool_,
    "TYPE_UINT8": np.uint8, "UINT8": np.uint8,
    "TYPE_UINT16": np.uint16, "UINT16": np.uint16,
    "TYPE_UINT32": np.uint32, "UINT32": np.uint32,
    "TYPE_UINT64": np.uint64, "UINT64": np.uint64,
    "TYPE_INT8": np.int8, "INT8": np.int8,
    "TYPE_INT16": np.int16, "INT16": np.int16,
    "TYPE_INT32": np.int32, "INT32": np.int32,
    "TYPE_INT64": np.int64, "INT64": np.int64,
    "TYPE_FP16": np.float16, "FP16": np.float16,
    "TYPE_FP32": np.float32, "FP32": np.float32,
    "TYPE_FP64": np.float64, "FP64": np.float64,
    "TYPE_STRING": np.object_, "BYTES": np.object_,
}

_NUMPY_TO_TRITON = [
    (np.bool_, "BOOL"), (np.uint8, "UINT8"), (np.uint16, "UINT16"), (np.uint32, "UINT32"),
    (np.uint64, "UINT64"), (np.int8, "INT8"), (np.int16, "INT16"), (np.int32, "INT32"),
    (np.int64, "INT64"), (np.float16, "FP16"), (np.float32, "FP32"), (np.float64, "FP64"),
]


def triton_string_to_numpy(triton_type):
    """The numpy type of a Triton data type name (TYPE_FP32 or FP32)."""
    try:
        return _TRITON_TO_NUMPY[triton_type]
    except KeyError:
        raise TritonModelException("unknown data type '%s'" % triton_type) from None


def numpy_to_triton_type(dtype):
    """The Triton data type name (FP32, BYTES, ...) of a numpy type, or None."""
    dtype = np.dtype(dtype)
    if dtype.kind in ("O", "S", "U"):
        return "BYTES"
    for t, name in _NUMPY_TO_TRITON:
        if dtype == np.dtype(t):
            return name
    return None


def serialize_byte_tensor(array):
    """BYTES elements in the binary layout: each a 4-byte little-endian length and its bytes."""
    out = bytearray()
    for v in np.asarray(array, dtype=np.object_).reshape(-1):
        b = v if isinstance(v, (bytes, bytearray)) else str(v).encode("utf-8")
        out += len(b).to_bytes(4, "little") + b
    return bytes(out)


def deserialize_bytes_tensor(buffer):
    """The elements of BYTES in the binary layout, as a flat numpy array of bytes."""
    items, i, n = [], 0, len(buffer)
    view = memoryview(buffer)
    while i < n:
        length = int.from_bytes(view[i:i + 4], "little")
        items.append(bytes(view[i + 4:i + 4 + length]))
        i += 4 + length
    return np.array(items, dtype=np.object_)


class TritonModelException(Exception):
    """Raised by this module for misuse of its API."""


class TritonError:
    """An error a model returns in an InferenceResponse (or raises as an exception)."""
    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    def __init__(self, message, code=INTERNAL):
        self._message = str(message)
        self._code = code

    def message(self):
        return self._message

    def code(self):
        return self._code

    def __str__(self):
        return self._message


class Tensor:
    """A named tensor holding a numpy array."""

    def __init__(self, name, data):
        if not isinstance(data, np.ndarray):
            raise TritonModelException("Tensor '%s' needs a numpy array, got %s" % (name, type(data).__name__))
        self._name = name
        self._data = data

    def name(self):
        return self._name

    def as_numpy(self):
        return self._data

    def triton_dtype(self):
        return numpy_to_triton_type(self._data.dtype)

    def shape(self):
        return list(self._data.shape)

    def is_cpu(self):
        return True

    @staticmethod
    def from_dlpack(name, capsule):
        raise TritonModelException("DLPack tensors are not offered by ModelKeeper's Python backend")


class InferenceRequest:
    """A request to the model: its inputs, the outputs asked for, its parameters."""

    def __init__(self, model_name=None, requested_output_names=None, inputs=None,
                 request_id="", parameters=None, model_version=-1, **kwargs):
        self._model_name = model_name
        self._model_version = model_version
        self._inputs = list(inputs or [])
        self._requested = list(requested_output_names or [])
        self._id = request_id
        self._parameters = parameters if isinstance(parameters, str) else json.dumps(parameters or {})

    def inputs(self):
        return self._inputs

    def requested_output_names(self):
        return self._requested

    def request_id(self):
        return self._id

    def parameters(self):
        return self._parameters

    def model_name(self):
        return self._model_name

    def model_version(self):
        return self._model_version

    def is_cancelled(self):
        return False

    def exec(self, decoupled=False):
        """Runs the request on model_name through the server (business logic scripting): the
        model is loaded on demand and leased while it runs. Errors come back in the response."""
        if decoupled:
            raise TritonModelException("decoupled BLS calls are not offered by ModelKeeper")
        if _CALLER is None:
            raise TritonModelException("InferenceRequest.exec is only offered inside execute")
        return _CALLER(self)

    async def async_exec(self, decoupled=False):
        return self.exec(decoupled)


# set by the runner: how a request reaches the server (see modelkeeper_runner.call_model)
_CALLER = None


class InferenceResponse:
    """The answer to one request: output tensors, or an error."""

    def __init__(self, output_tensors=None, error=None, **kwargs):
        self._outputs = list(output_tensors or [])
        self._error = error

    def output_tensors(self):
        return self._outputs

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error


def get_input_tensor_by_name(request, name):
    for t in request.inputs():
        if t.name() == name:
            return t
    return None


def get_output_tensor_by_name(response, name):
    for t in response.output_tensors():
        if t.name() == name:
            return t
    return None


def get_input_config_by_name(model_config, name):
    for c in model_config.get("input", []):
        if c.get("name") == name:
            return c
    return None


def get_output_config_by_name(model_config, name):
    for c in model_config.get("output", []):
        if c.get("name") == name:
            return c
    return None


class Logger:
    """Lines to the server's log, one per call, with the model's name."""
    INFO, WARNING, ERROR, VERBOSE = "INFO", "WARNING", "ERROR", "VERBOSE"

    @staticmethod
    def log(message, level=INFO):
        sys.stderr.write("%s %s\n" % (level, str(message).replace("\n", " ")))
        sys.stderr.flush()

    @staticmethod
    def log_info(message):
        Logger.log(message, Logger.INFO)

    @staticmethod
    def log_warn(message):
        Logger.log(message, Logger.WARNING)

    @staticmethod
    def log_error(message):
        Logger.log(message, Logger.ERROR)

    @staticmethod
    def log_verbose(message):
        Logger.log(message, Logger.VERBOSE)


class ModelConfig:
    """What auto_complete_config is given: the configuration as read, to complete."""

    def __init__(self, config):
        self._config = config

    def as_dict(self):
        return self._config

    def set_max_batch_size(self, max_batch_size):
        self._config["max_batch_size"] = int(max_batch_size)

    def add_input(self, tensor):
        self._add("input", tensor)

    def add_output(self, tensor):
        self._add("output", tensor)

    def set_dynamic_batching(self):
        self._config.setdefault("dynamic_batching", {})

    def set_model_transaction_policy(self, policy):
        self._config["model_transaction_policy"] = dict(policy)

    def _add(self, key, tensor):
        for field in ("name", "data_type", "dims"):
            if field not in tensor:
                raise TritonModelException("%s needs '%s': %s" % (key, field, tensor))
        listed = self._config.setdefault(key, [])
        for t in listed:
            if t.get("name") == tensor["name"]:
                return  # declared in config.pbtxt: the file wins
        listed.append({"name": tensor["name"], "data_type": tensor["data_type"],
                       "dims": [int(d) for d in tensor["dims"]]})
