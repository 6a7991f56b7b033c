"""tritonclient against ModelKeeper serving Triton Python-backend models (model.py) from
python_models/, copied to MK_PY_REPO by PythonBackendTest.java; each model instance is a child
process of the server."""
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

REPO = os.environ["MK_PY_REPO"]
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(params=["http", "grpc"])
def client(request, http, grpc):
    return (httpclient, http) if request.param == "http" else (grpcclient, grpc)


def tensor(module, name, array, datatype):
    t = module.InferInput(name, list(array.shape), datatype)
    t.set_data_from_numpy(array)
    return t


def processes_of(model):
    """The pids of live processes running model's model.py."""
    path = os.path.join(REPO, model, "1", "model.py").encode()
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if path in f.read().split(b"\0"):
                        pids.append(int(pid))
            except OSError:
                pass
    return pids


def wait_gone(model):
    deadline = time.monotonic() + 30
    while processes_of(model) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_of(model)


def error_of(call):
    with pytest.raises(InferenceServerException) as e:
        call()
    return e.value.message()


def test_add_sub_as_tritons_docs_write_it(client):
    module, c = client
    a = np.arange(16, dtype=np.float32)
    b = np.full(16, 0.5, dtype=np.float32)
    result = c.infer("add_sub", [tensor(module, "INPUT0", a, "FP32"), tensor(module, "INPUT1", b, "FP32")])
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert len(processes_of("add_sub")) == 2  # instance_group count 2: two processes


def test_inputs_are_checked_against_the_config_before_execute(client):
    module, c = client
    a = np.arange(16, dtype=np.float32)
    wrong_type = error_of(lambda: c.infer("add_sub", [
        tensor(module, "INPUT0", a.astype(np.int32), "INT32"), tensor(module, "INPUT1", a, "FP32")]))
    assert "input 'INPUT0' of model 'add_sub/1' must be FP32, was INT32" in wrong_type
    wrong_shape = error_of(lambda: c.infer("add_sub", [
        tensor(module, "INPUT0", a[:3], "FP32"), tensor(module, "INPUT1", a, "FP32")]))
    assert "input 'INPUT0' of model 'add_sub/1' has shape [3], the model takes [16]" in wrong_shape
    missing = error_of(lambda: c.infer("add_sub", [tensor(module, "INPUT0", a, "FP32")]))
    assert "model 'add_sub/1' needs input 'INPUT1', which is missing" in missing
    rows = np.zeros((9, 1), dtype=np.float32)
    too_many = error_of(lambda: c.infer("together", [tensor(module, "IN", rows, "FP32")]))
    assert "a batch of 9 rows is more than model 'together/1' takes" in too_many


def test_batched_model_gets_rows_and_bytes(client):
    module, c = client
    text = np.array([[b"abc"], [b"h\x00llo \xf0\x9f\x98\x80"], [b""]], dtype=np.object_)
    x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int32)
    result = c.infer("batched", [tensor(module, "TEXT", text, "BYTES"), tensor(module, "X", x, "INT32")])
    np.testing.assert_array_equal(result.as_numpy("LENGTH"), [[3], [10], [0]])
    assert [v[0] for v in result.as_numpy("UPPER")] == [b"ABC", b"H\x00LLO \xf0\x9f\x98\x80", b""]
    np.testing.assert_array_equal(result.as_numpy("DOUBLED"), x * 2)
    outputs = [module.InferRequestedOutput("DOUBLED")]
    only = c.infer("batched", [tensor(module, "TEXT", text, "BYTES"), tensor(module, "X", x, "INT32")],
                   outputs=outputs)
    assert only.as_numpy("LENGTH") is None
    np.testing.assert_array_equal(only.as_numpy("DOUBLED"), x * 2)


def test_batched_requests_reach_one_execute_call_as_a_list(client):
    # eight clients at once on a model whose execute takes 100 ms: those that queue meanwhile reach
    # the next execute call together, as a list of requests (max_batch_size 8)
    module, _ = client
    url = os.environ["MK_HTTP" if module is httpclient else "MK_GRPC"]

    def one(i):  # a client of its own each: tritonclient's are not shared across threads
        x = np.array([[float(i)]], dtype=np.float32)
        with module.InferenceServerClient(url) as own:
            r = own.infer("together", [tensor(module, "IN", x, "FP32")])
        return r.as_numpy("OUT")[0][0], r.as_numpy("REQUESTS")[0][0]

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, range(16)))
    assert [a for a, _ in answers] == [float(i) for i in range(16)]
    assert max(n for _, n in answers) > 1
    assert all(1 <= n <= 8 for _, n in answers)


def test_auto_complete_config_declares_the_tensors(client):
    module, c = client
    result = c.infer("auto_complete", [tensor(module, "IN", np.array([1, 2, 3], dtype=np.float32), "FP32")])
    np.testing.assert_array_equal(result.as_numpy("OUT"), [-1, -2, -3])
    md = c.get_model_metadata("auto_complete")
    names = [i["name"] for i in md["inputs"]] if module is httpclient else [i.name for i in md.inputs]
    assert names == ["IN"]


def bls_inputs(module, callee):
    a = np.arange(16, dtype=np.int32)
    b = np.full(16, 2, dtype=np.int32)
    return a, b, [tensor(module, "INPUT0", a, "INT32"), tensor(module, "INPUT1", b, "INT32"),
                  tensor(module, "CALLEE", np.array([callee.encode()], dtype=np.object_), "BYTES")]


def test_bls_calls_an_onnx_model_and_a_python_model(client):
    module, c = client
    a, b, inputs = bls_inputs(module, "")
    result = c.infer("bls", inputs)
    np.testing.assert_array_equal(result.as_numpy("SUM"), a + b)
    np.testing.assert_array_equal(result.as_numpy("DIFF"), (a - b).astype(np.float32))


def test_bls_call_of_an_unknown_model_answers_its_error(client):
    module, c = client
    _, _, inputs = bls_inputs(module, "no_such_model")
    message = error_of(lambda: c.infer("bls", inputs))
    assert "no_such_model" in message


IN = np.array([1, 2, 3, 4], dtype=np.float32)


def test_a_model_may_name_its_own_interpreter(client):
    module, c = client
    result = c.infer("own_interpreter", [tensor(module, "IN", IN, "FP32")])
    np.testing.assert_array_equal(result.as_numpy("OUT"), IN * 2)


def infer_in(module, c, model):
    return c.infer(model, [tensor(module, "IN", IN, "FP32")])


def test_initialize_raising_is_refused_the_same_way_until_fixed(client):
    module, c = client
    first = error_of(lambda: infer_in(module, c, "init_raises"))
    assert "ValueError: the weights file is missing (model.py line 3, in initialize)" in first
    assert error_of(lambda: infer_in(module, c, "init_raises")) == first
    assert c.is_server_live()


def test_execute_raising_answers_the_error_and_the_server_carries_on(client):
    module, c = client
    message = error_of(lambda: infer_in(module, c, "exec_raises"))
    assert "model 'exec_raises/1' raised in execute: RuntimeError: cannot decode this image" in message
    assert "(model.py line 3, in execute)" in message
    assert c.is_server_ready()


def test_a_process_that_exits_fails_its_request_and_starts_again(client):
    module, c = client
    message = error_of(lambda: infer_in(module, c, "exits"))
    assert "the process of model 'exits/1' exited (exit code 1)" in message
    assert c.is_server_ready()


def test_a_process_failing_request_after_request_is_started_again_after_a_back_off(http):
    # two restarts at once, then a back-off: 503 with Retry-After, naming the failures
    for _ in range(3):
        assert "exited (exit code 1)" in error_of(lambda: infer_in(httpclient, http, "crash_loop"))
    with pytest.raises(InferenceServerException) as e:
        infer_in(httpclient, http, "crash_loop")
    assert e.value.status() == "503"
    assert "the process of model 'crash_loop/1' failed 3 requests in a row; it starts again in 1 s" in e.value.message()


def test_a_process_that_hangs_is_stopped_after_its_timeout(client):
    module, c = client
    started = time.monotonic()
    message = error_of(lambda: infer_in(module, c, "hangs"))
    assert "model 'hangs/1' did not answer within 3 s; its process was stopped" in message
    assert time.monotonic() - started < 60
    assert wait_gone("hangs") == []
    assert c.is_server_ready()


def test_zz_fixed_files_are_served_at_the_next_request(http, grpc):
    # last in this file: every failing model.py is replaced by a working one
    for model in ("init_raises", "exits", "hangs"):
        shutil.copy(os.path.join(HERE, "python_models", "echo_model.py"),
                    os.path.join(REPO, model, "1", "model.py"))
    for module, c in ((httpclient, http), (grpcclient, grpc)):
        for model in ("init_raises", "exits", "hangs"):
            np.testing.assert_array_equal(infer_in(module, c, model).as_numpy("OUT"), IN)


def test_zz_unloading_ends_the_processes(http):
    # loaded again first: with more models than the budget's count, an eviction may have ended it
    a = np.arange(16, dtype=np.float32)
    http.infer("add_sub", [tensor(httpclient, "INPUT0", a, "FP32"), tensor(httpclient, "INPUT1", a, "FP32")])
    assert len(processes_of("add_sub")) == 2
    http.unload_model("add_sub", headers={"Authorization": "Bearer " + os.environ["MK_TOKEN"]})
    assert wait_gone("add_sub") == []
