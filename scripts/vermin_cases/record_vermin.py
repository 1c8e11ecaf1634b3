"""Run vermin's own test suite and record every (source, expected minimum) it asserts.

Run from a checkout of vermin (the directory holding ``vermin/`` and ``tests/``),
under the newest interpreter available so that version-gated tests run:

    cd /work/scratch/coderuns/vermin && ~/.pyenv/versions/3.13.0/bin/python \
        ../record_vermin.py > ../vermin_raw.jsonl

Each ``detect(source)`` result and each visitor's ``minimum_versions()`` is tagged
with its source; ``assertOnlyIn(expected, tagged)`` then records one case. Nothing
of vermin is changed on disk.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, ".")

from tests import testutils
from vermin import Config

DEFAULT_CONFIG = repr(Config())
RECORDS = []


class Tagged(list):
    source = None


def _tag(result, source):
    tagged = Tagged(result)
    tagged.source = source
    return tagged


_detect = testutils.VerminTest.detect
_visit = testutils.VerminTest.visit
_only_in = testutils.VerminTest.assertOnlyIn


def detect(self, source):
    return _tag(_detect(self, source), source)


def visit(self, source, path=None):
    visitor = _visit(self, source, path)
    if isinstance(visitor, list):  # vermin's visit() answers versions for unparsable code
        return _tag(visitor, source)
    original = visitor.minimum_versions

    def minimum_versions(*args, **kwargs):
        return _tag(original(*args, **kwargs), source)

    visitor.minimum_versions = minimum_versions
    return visitor


def assert_only_in(self, values, data, msg=None):
    source = getattr(data, "source", None)
    try:
        _only_in(self, values, data, msg)
        ok = True
    except AssertionError:
        ok = False
    if source is not None:
        RECORDS.append(
            {
                "test": self.id(),
                "source": source,
                "expected": values,
                "config_default": repr(self.config) == DEFAULT_CONFIG,
                "features": sorted(self.config.features()),
                "eval_annotations": self.config.eval_annotations(),
                "backports": sorted(self.config.backports()),
                "exclusions": sorted(self.config.exclusions()),
                "targets": repr(self.config.targets()),
                "vermin_agrees_here": ok,
            }
        )
    if not ok:
        _only_in(self, values, data, msg)


testutils.VerminTest.detect = detect
testutils.VerminTest.visit = visit
testutils.VerminTest.assertOnlyIn = assert_only_in

SUITES = [
    "lang",
    "module",
    "builtin_classes",
    "class",
    "exception",
    "builtin_functions",
    "builtin_constants",
    "builtin_exceptions",
    "function",
    "constants",
    "decorators",
    "kwargs",
    "strftime_directive",
    "annotation",
    "array_typecodes",
    "codecs_error_handlers",
    "codecs_encodings",
    "bytes_directive",
    "general",
]

if __name__ == "__main__":
    failed = 0
    for suite in SUITES:
        loaded = unittest.defaultTestLoader.loadTestsFromName("tests." + suite)
        with open(os.devnull, "w") as quiet:
            result = unittest.TextTestRunner(stream=quiet, buffer=True).run(loaded)
        failed += len(result.failures) + len(result.errors)
        print(
            f"{suite}: ran {result.testsRun}, failures {len(result.failures)}, "
            f"errors {len(result.errors)}",
            file=sys.stderr,
        )
    for rec in RECORDS:
        print(json.dumps(rec))
