"""The test suite: a package, so test modules share helpers as ``tests.<module>``.

Bytecode caching is turned back on for the test run, even where the environment sets
``PYTHONDONTWRITEBYTECODE`` (as this project's development machines do). Without it
every pytest process -- the controller, each xdist worker, each pytest or CLI run a
test starts in a subprocess -- compiles src/ again and pytest rewrites the asserts
of every test module again (about 6 s of CPU a process). With it, the first process
writes ``__pycache__`` (git-ignored) and the rest read it, as on a machine with the
default setting. This module is imported before ``tests/conftest.py`` and so before
any test module or gradeloop module; the environment variable is dropped so that the
subprocesses tests start cache too.

TLS trusts one certificate authority for the test run, ``tests/data/unused-ca.pem``,
whose key was thrown away (``SSL_CERT_FILE``, which httpx and the SDKs' HTTP clients
read). Every SDK client builds a TLS context, and loading a system's CA bundle into it
took ~40 ms of CPU: about 370 clients a run, 15 s. The tests only speak plain HTTP to
emulators on 127.0.0.1, so no test uses a TLS context; one that reached a real server
anyway would now also fail its certificate check.
"""

import os
import sys
from pathlib import Path

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ["SSL_CERT_FILE"] = str(Path(__file__).resolve().parent / "data" / "unused-ca.pem")
os.environ.pop("SSL_CERT_DIR", None)
