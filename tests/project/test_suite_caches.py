"""The suite's own set-up: bytecode caching is on for the test run (tests/__init__.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def test_the_run_writes_bytecode_caches_whatever_the_environment_says() -> None:
    # PYTHONDONTWRITEBYTECODE=1 (set on the project's machines) would make every pytest
    # process and every subprocess compile src/ and rewrite the test modules again
    assert sys.dont_write_bytecode is False
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ  # so subprocesses cache too
    here = Path(__file__)
    rewritten = list((here.parent / "__pycache__").glob(f"{here.stem}.*-pytest-*.pyc"))
    assert rewritten, "pytest did not cache this module's assertion-rewritten bytecode"


def test_sdk_clients_load_one_ca_certificate_not_the_systems_bundle() -> None:
    # loading the system's CA bundle into each client's TLS context cost ~40 ms of CPU a
    # client, 15 s a run; the tests speak plain HTTP to 127.0.0.1 only (tests/__init__.py)
    import httpx
    import httpx2

    assert os.environ["SSL_CERT_FILE"].endswith("unused-ca.pem")
    assert httpx2.create_ssl_context().cert_store_stats()["x509_ca"] == 1  # the SDK's
    assert httpx.create_ssl_context().cert_store_stats()["x509_ca"] == 1  # openai's


def test_what_collection_left_alive_is_out_of_the_garbage_collectors_way() -> None:
    # tests/conftest.py freezes it: each full collection walked ~400,000 objects that
    # live to the end of the run anyway, ~7 s of CPU per xdist worker
    import gc

    assert gc.get_freeze_count() > 10_000
