"""Triton's fast paths with the real tritonclient against a running ModelKeeper: system shared
memory (HTTP and gRPC), gRPC ModelStreamInfer, and compressed requests and answers.

The server's addresses come from MK_HTTP and MK_GRPC; MK_TOKEN is its bearer token, MK_PID its
process (for its memory), MK_MAX_SHM its --max-shared-memory-bytes.
"""
import gzip
import http.client
import os
import queue
import threading
import time
import uuid
import zlib

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import (
    InferenceServerException,
    serialize_byte_tensor,
    serialized_byte_size,
)

TOKEN = os.environ["MK_TOKEN"]
AUTH = {"Authorization": "Bearer " + TOKEN}
GAUTH = {"authorization": "Bearer " + TOKEN}
MAX_SHM = int(os.environ["MK_MAX_SHM"])

IRIS = np.array([[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]], dtype=np.float32)

# the other inputs of the every-datatype model "types", sent in the request
OTHERS = {
    "fp64": (np.array([1.5, -2.0], dtype=np.float64), "FP64"),
    "int32": (np.array([1, -7], dtype=np.int32), "INT32"),
    "int64": (np.array([1, -7], dtype=np.int64), "INT64"),
    "int16": (np.array([1, -3], dtype=np.int16), "INT16"),
    "int8": (np.array([1, -3], dtype=np.int8), "INT8"),
    "uint8": (np.array([0, 200], dtype=np.uint8), "UINT8"),
    "bool": (np.array([True, False]), "BOOL"),
}

CLIENTS = {"http": httpclient, "grpc": grpcclient}


@pytest.fixture(params=list(CLIENTS))
def client(request, http, grpc):
    module = CLIENTS[request.param]
    return module, (http if module is httpclient else grpc), (AUTH if module is httpclient else GAUTH)


@pytest.fixture
def region():
    """Makes POSIX shared memory regions (unique keys); destroys them after the test."""
    made = []

    def make(byte_size):
        key = "/mk_test_" + uuid.uuid4().hex[:12]
        handle = shm.create_shared_memory_region(key[1:], key, byte_size)
        made.append(handle)
        return key, handle

    yield make
    for handle in made:
        shm.destroy_shared_memory_region(handle)


def names(status):
    if isinstance(status, list):  # HTTP: a JSON array
        return {r["name"] for r in status}
    return set(status.regions.keys())


def unregister_all(c, auth):
    c.unregister_system_shared_memory(headers=auth)


# -- system shared memory -----------------------------------------------------------------------


def test_shm_register_status_unregister(client, region):
    module, c, auth = client
    key, _ = region(64)
    c.register_system_shared_memory("one", key, 64, headers=auth)
    c.register_system_shared_memory("two", key, 32, offset=32, headers=auth)
    try:
        assert {"one", "two"} <= names(c.get_system_shared_memory_status())
        assert names(c.get_system_shared_memory_status("two")) == {"two"}
        c.unregister_system_shared_memory("one", headers=auth)
        assert "one" not in names(c.get_system_shared_memory_status())
    finally:
        unregister_all(c, auth)
    assert not ({"one", "two"} & names(c.get_system_shared_memory_status()))


def test_shm_needs_the_token(client, region):
    module, c, auth = client
    key, _ = region(64)
    with pytest.raises(InferenceServerException) as e:
        c.register_system_shared_memory("nope", key, 64)
    assert e.value.status() in ("401", "StatusCode.UNAUTHENTICATED")


def test_shm_fp32_and_bytes_inputs_and_outputs_at_offsets(client, region):
    module, c, auth = client
    fp32 = np.array([1.5, -2.25], dtype=np.float32)
    words = np.array([b"shared", "m\u00e9moire".encode()], dtype=np.object_)
    words_wire = serialize_byte_tensor(words)
    # one region for the inputs, at offsets 16 and 64; one for the outputs at 8 and 40
    key_in, h_in = region(256)
    key_out, h_out = region(256)
    shm.set_shared_memory_region(h_in, [fp32], offset=16)
    shm.set_shared_memory_region(h_in, [words_wire], offset=64)
    c.register_system_shared_memory("in", key_in, 256, headers=auth)
    c.register_system_shared_memory("out", key_out, 256, headers=auth)
    try:
        inputs = []
        for k, (a, dt) in OTHERS.items():  # in the request, beside those in shared memory
            i = module.InferInput(k + "_in", list(a.shape), dt)
            i.set_data_from_numpy(a)
            inputs.append(i)
        i = module.InferInput("fp32_in", [2], "FP32")
        i.set_shared_memory("in", fp32.nbytes, offset=16)
        inputs.append(i)
        i = module.InferInput("bytes_in", [2], "BYTES")
        i.set_shared_memory("in", serialized_byte_size(words_wire), offset=64)
        inputs.append(i)
        out_fp32 = module.InferRequestedOutput("fp32_out")
        out_fp32.set_shared_memory("out", 8, offset=8)
        out_bytes = module.InferRequestedOutput("bytes_out")
        out_bytes.set_shared_memory("out", 128, offset=40)
        in_request = module.InferRequestedOutput("int32_out")
        result = c.infer("types", inputs, outputs=[out_fp32, out_bytes, in_request])
        np.testing.assert_array_equal(
            shm.get_contents_as_numpy(h_out, np.float32, [2], offset=8), fp32 + fp32)
        got = shm.get_contents_as_numpy(h_out, np.object_, [2], offset=40)
        assert [bytes(b) for b in got] == list(words)
        np.testing.assert_array_equal(result.as_numpy("int32_out"), [2, -14])
        placed = result.get_output("fp32_out")
        if module is httpclient:  # as Triton answers it: neither data nor its size
            assert "data" not in placed and "parameters" not in placed
        else:
            assert placed.parameters["shared_memory_region"].string_param == "out"
    finally:
        unregister_all(c, auth)


def shm_iris(module, c, region_name, offset=0, byte_size=IRIS.nbytes):
    i = module.InferInput("input", list(IRIS.shape), "FP32")
    i.set_shared_memory(region_name, byte_size, offset=offset)
    return c.infer("iris", [i])


def test_shm_iris_input(client, region):
    module, c, auth = client
    key, h = region(IRIS.nbytes)
    shm.set_shared_memory_region(h, [IRIS])
    c.register_system_shared_memory("iris-in", key, IRIS.nbytes, headers=auth)
    try:
        assert list(shm_iris(module, c, "iris-in").as_numpy("label")) == [0, 2]
    finally:
        unregister_all(c, auth)


def test_shm_refusals(client, region):
    module, c, auth = client
    key, h = region(64)
    # keys outside /dev/shm
    for bad in ("/../etc/passwd", "/a/b", ".."):
        with pytest.raises(InferenceServerException) as e:
            c.register_system_shared_memory("bad", bad, 8, headers=auth)
        assert e.value.status() in ("400", "StatusCode.INVALID_ARGUMENT"), bad
    # a registration past the end of the memory
    with pytest.raises(InferenceServerException) as e:
        c.register_system_shared_memory("long", key, 128, headers=auth)
    assert "64 bytes" in e.value.message()
    # a client elsewhere, as a proxy on this machine says: shared memory is for local clients
    forwarded = dict(auth, **{"x-forwarded-for": "203.0.113.9"})
    with pytest.raises(InferenceServerException) as e:
        c.register_system_shared_memory("remote", key, 64, headers=forwarded)
    assert e.value.status() in ("403", "StatusCode.PERMISSION_DENIED")
    assert "loopback" in e.value.message()
    c.register_system_shared_memory("small", key, 64, headers=auth)
    try:
        # an input read past the end of the region: refused, never a crash
        with pytest.raises(InferenceServerException) as e:
            shm_iris(module, c, "small", offset=40)
        assert e.value.status() in ("400", "StatusCode.INVALID_ARGUMENT")
        assert "past the end" in e.value.message()
        # an output written past the end of the region
        i = module.InferInput("input", list(IRIS.shape), "FP32")
        i.set_data_from_numpy(IRIS)
        o = module.InferRequestedOutput("probabilities")
        o.set_shared_memory("small", 24, offset=48)
        with pytest.raises(InferenceServerException) as e:
            c.infer("iris", [i], outputs=[o])
        assert "past the end" in e.value.message()
        # CUDA shared memory: there is none
        with pytest.raises(InferenceServerException) as e:
            c.register_cuda_shared_memory("gpu", b"\0" * 64, 0, 64, headers=auth)
        assert "CUDA" in e.value.message()
    finally:
        unregister_all(c, auth)


def test_shm_more_than_the_bound_is_refused(client, region):
    module, c, auth = client
    key, _ = region(MAX_SHM + 4096)
    with pytest.raises(InferenceServerException) as e:
        c.register_system_shared_memory("huge", key, MAX_SHM + 4096, headers=auth)
    assert e.value.status() in ("413", "StatusCode.RESOURCE_EXHAUSTED")
    assert "max-shared-memory-bytes" in e.value.message()
    c.register_system_shared_memory("fits", key, MAX_SHM, headers=auth)  # the bound itself fits
    unregister_all(c, auth)


def test_shm_region_unregistered_mid_use(client, region):
    module, c, auth = client
    key, h = region(IRIS.nbytes)
    shm.set_shared_memory_region(h, [IRIS])
    c.register_system_shared_memory("busy", key, IRIS.nbytes, headers=auth)
    outcomes = queue.Queue()
    stop = threading.Event()

    def infer_until_stopped():
        client2 = (httpclient if module is httpclient else grpcclient).InferenceServerClient(
            os.environ["MK_HTTP" if module is httpclient else "MK_GRPC"])
        while not stop.is_set():
            try:
                outcomes.put(list(shm_iris(module, client2, "busy").as_numpy("label")))
            except InferenceServerException as e:
                outcomes.put(e.message())

    t = threading.Thread(target=infer_until_stopped)
    t.start()
    try:
        first = outcomes.get(timeout=60)  # at least one inference read the region
        assert first == [0, 2], first
        c.unregister_system_shared_memory("busy", headers=auth)
        deadline = time.monotonic() + 60
        while True:  # the requests after it are refused, cleanly
            o = outcomes.get(timeout=max(1, deadline - time.monotonic()))
            if not isinstance(o, list):
                break
        assert "not registered" in o or "was unregistered" in o, o
    finally:
        stop.set()
        t.join(timeout=60)
    assert c.is_server_live()


# -- gRPC streaming ------------------------------------------------------------------------------


def iris_input():
    i = grpcclient.InferInput("input", list(IRIS.shape), "FP32")
    i.set_data_from_numpy(IRIS)
    return i


def test_stream_answers_1000_requests_in_order(grpc):
    answers = queue.Queue()
    grpc.start_stream(callback=lambda result, error: answers.put((result, error)))
    try:
        for n in range(1000):
            grpc.async_stream_infer("iris", [iris_input()], request_id=str(n))
        got = [answers.get(timeout=120) for _ in range(1000)]
    finally:
        grpc.stop_stream()
    assert all(error is None for _, error in got), [e for _, e in got if e][:3]
    assert [r.get_response().id for r, _ in got] == [str(n) for n in range(1000)]
    assert all(list(r.as_numpy("label")) == [0, 2] for r, _ in got)


def test_stream_error_in_the_middle_keeps_the_stream_open(grpc):
    answers = queue.Queue()
    grpc.start_stream(callback=lambda result, error: answers.put((result, error)))
    try:
        grpc.async_stream_infer("iris", [iris_input()], request_id="before")
        bad = grpcclient.InferInput("input", [2, 3], "FP32")
        bad.set_data_from_numpy(np.ones((2, 3), dtype=np.float32))
        grpc.async_stream_infer("iris", [bad], request_id="bad")
        grpc.async_stream_infer("no-such-model", [iris_input()], request_id="unknown")
        grpc.async_stream_infer("iris", [iris_input()], request_id="after")
        got = [answers.get(timeout=60) for _ in range(4)]
    finally:
        grpc.stop_stream()
    assert got[0][1] is None and got[0][0].get_response().id == "before"
    assert got[1][0] is None and "shape" in got[1][1].message()
    assert got[2][0] is None and "no-such-model" in got[2][1].message()
    assert got[3][1] is None and got[3][0].get_response().id == "after"


def test_stream_client_that_stops_reading_holds_no_model_slot(grpc):
    blocked = threading.Event()
    release = threading.Event()
    answers = queue.Queue()

    def callback(result, error):
        answers.put((result, error))
        blocked.set()
        release.wait(timeout=120)  # the client's reading thread stops here

    big = np.tile(IRIS, (2000, 1))  # ~32 kB answers, so the window fills soon
    reader = grpcclient.InferenceServerClient(os.environ["MK_GRPC"])
    reader.start_stream(callback=callback)
    try:
        for n in range(500):
            i = grpcclient.InferInput("input", list(big.shape), "FP32")
            i.set_data_from_numpy(big)
            reader.async_stream_infer("iris", [i], request_id=str(n))
        assert blocked.wait(timeout=60)
        # the stream's runs ended and freed the model: other clients are served at once, again
        # and again, while the stream's client reads nothing
        for _ in range(20):
            assert list(grpc.infer("iris", [iris_input()], client_timeout=10).as_numpy("label")) == [0, 2]
    finally:
        release.set()
    got = [answers.get(timeout=120) for _ in range(500)]
    reader.stop_stream()
    reader.close()
    assert all(error is None for _, error in got)
    assert [r.get_response().id for r, _ in got] == [str(n) for n in range(500)]


# -- compression ---------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["gzip", "deflate"])
def test_http_compressed_request_and_answer(http, algorithm):
    many = np.tile(IRIS, (500, 1))
    i = httpclient.InferInput("input", list(many.shape), "FP32")
    i.set_data_from_numpy(many, binary_data=False)  # JSON: worth compressing
    result = http.infer(
        "iris", [i],
        request_compression_algorithm=algorithm,
        response_compression_algorithm=algorithm)
    assert list(result.as_numpy("label")[:2]) == [0, 2]


@pytest.mark.parametrize("algorithm", ["gzip", "deflate"])
def test_http_compressed_answers_are_compressed(algorithm):
    host, port = os.environ["MK_HTTP"].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    body = ('{"inputs":[{"name":"input","datatype":"FP32","shape":[1000,4],"data":%s}]}'
            % (np.tile(IRIS, (500, 1)).flatten().tolist())).encode()
    packed = gzip.compress(body) if algorithm == "gzip" else zlib.compress(body)
    conn.request("POST", "/v2/models/iris/infer", body=packed, headers={
        "Content-Type": "application/json", "Content-Encoding": algorithm,
        "Accept-Encoding": algorithm})
    r = conn.getresponse()
    data = r.read()
    assert r.status == 200, data
    assert r.getheader("Content-Encoding") == algorithm
    plain = gzip.decompress(data) if algorithm == "gzip" else zlib.decompress(data)
    assert b'"label"' in plain


@pytest.mark.parametrize("algorithm", ["gzip", "deflate"])
def test_grpc_compressed_request_and_answer(grpc, algorithm):
    result = grpc.infer("iris", [iris_input()], compression_algorithm=algorithm)
    assert list(result.as_numpy("label")) == [0, 2]


def rss_bytes():
    with open("/proc/%s/status" % os.environ["MK_PID"]) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize("algorithm", ["gzip", "deflate"])
def test_http_decompression_bomb_is_refused_within_the_bound(algorithm):
    # 1 GiB of zeros, about 1 MB compressed: inflated only up to --max-request-bytes, then 413
    inflated = 1 << 30
    z = zlib.compressobj(9, zlib.DEFLATED, 31 if algorithm == "gzip" else 15)
    zero = bytes(1 << 20)
    bomb = b"".join([z.compress(zero) for _ in range(inflated >> 20)] + [z.flush()])
    assert len(bomb) < 2 << 20
    before = rss_bytes()
    host, port = os.environ["MK_HTTP"].split(":")
    for _ in range(3):
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.request("POST", "/v2/models/iris/infer", body=bomb, headers={
            "Content-Type": "application/json", "Content-Encoding": algorithm})
        r = conn.getresponse()
        text = r.read().decode()
        assert r.status == 413, text
        assert "inflates to more than the limit" in text
        conn.close()
    # memory stays flat: at most the limit's worth (32 MiB by default) per bomb was ever taken
    assert rss_bytes() - before < 256 << 20, (before, rss_bytes())
