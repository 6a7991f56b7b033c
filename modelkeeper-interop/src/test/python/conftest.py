"""Fixtures shared by the interop tests: tritonclient's HTTP and gRPC clients of the server at
MK_HTTP and MK_GRPC (host:port)."""
import os

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient


@pytest.fixture(scope="module")
def http():
    with httpclient.InferenceServerClient(os.environ["MK_HTTP"], network_timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def grpc():
    with grpcclient.InferenceServerClient(os.environ["MK_GRPC"]) as c:
        yield c
