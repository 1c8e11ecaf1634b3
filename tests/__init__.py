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
"""

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
