"""Turn vermin's recorded test assertions into a case set for code_runs.

Input: vermin_raw.jsonl (from record_vermin.py). Output: vermin_cases.json with
provenance and one entry per (source, minimum) pair whose Python 3 minimum is
3.8-3.14, tagged with a kind and with what the real interpreters (pyenv 3.8-3.13)
say: whether compile() accepts the snippet, and whether its imports resolve.
"""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent  # vermin_raw.jsonl and probe_cases.py live here
PYENV = Path.home() / ".pyenv" / "versions"
INTERPRETERS = {8: "3.8.18", 9: "3.9.18", 10: "3.10.13", 11: "3.11.7", 12: "3.12.1", 13: "3.13.0"}
VERMIN_COMMIT = "88eab76769048524c1abd3c2833df35f1953ba6c"

MEMBER_SUITES = {
    "function",
    "class",
    "constants",
    "builtin_functions",
    "builtin_classes",
    "builtin_constants",
    "builtin_exceptions",
    "exception",
    "decorators",
}
OPERATOR_TESTS = {
    "test_dict_union",
    "test_dict_union_merge",
    "test_typecode_w",
    "test_mod_inverse_pow",
}
GENERIC_TESTS = {"test_builtin_generic_type_annotation", "test_issue_66_annotations"}
MEMBER_LANG_TESTS = {"test_issue_168_keyword_values"}


def py3_minimum(expected):
    if isinstance(expected, list) and expected and all(isinstance(x, int) for x in expected):
        expected = [expected]
    for v in expected or []:
        if isinstance(v, list) and len(v) == 2 and v[0] == 3:
            return v[1]
    return None


def kind_of(rec):
    suite = rec["test"].split(".")[1]
    test = rec["test"].rsplit(".", 1)[1]
    plain = not (
        rec["features"] or rec["eval_annotations"] or rec["backports"] or rec["exclusions"]
    )
    if test in OPERATOR_TESTS:
        return "operator" if plain else None
    if test in GENERIC_TESTS:
        return "generic"  # vermin evaluates annotations here; run-time subscripts
    if test == "test_union_types_enabled":
        return "union"  # vermin's opt-in union-types feature
    if not plain:
        return None
    if suite == "module":
        return "module"
    if suite == "kwargs":
        return "kwarg"
    if suite in MEMBER_SUITES or test in MEMBER_LANG_TESTS:
        return "member"
    if suite == "lang":
        return "syntax"
    return None


def probe_all(sources):
    answers = {}
    for minor, version in INTERPRETERS.items():
        exe = PYENV / version / "bin" / "python"
        done = subprocess.run(
            [str(exe), "-I", "-S", str(HERE / "probe_cases.py")],
            input=json.dumps(sources),
            capture_output=True,
            text=True,
            check=True,
        )
        answers[minor] = json.loads(done.stdout)
    return answers


def main():
    raw = [json.loads(line) for line in (HERE / "vermin_raw.jsonl").open()]
    cases = {}
    for rec in raw:
        minimum = py3_minimum(rec["expected"])
        if minimum is None or not 8 <= minimum <= 14:
            continue
        kind = kind_of(rec)
        if kind is None:
            continue
        key = (rec["source"], minimum)
        if key not in cases:
            cases[key] = {
                "kind": kind,
                "minimum": f"3.{minimum}",
                "source": rec["source"],
                "vermin_test": rec["test"].split(".", 1)[1],
            }
    ordered = sorted(cases.values(), key=lambda c: (c["kind"], c["vermin_test"], c["source"]))
    sources = [c["source"] for c in ordered]
    answers = probe_all(sources)
    for i, case in enumerate(ordered):
        minimum = int(case["minimum"][2:])
        case["compiles"] = "".join(
            "1" if answers[m][i]["compiles"] else "0" for m in sorted(INTERPRETERS)
        )
        if minimum in answers:
            bad = [imp for imp in answers[minimum][i]["imports"] if imp[2] is False]
            if bad:
                case["imports_fail_at_minimum"] = bad
        if minimum - 1 in answers:
            imports = answers[minimum - 1][i]["imports"]
            if imports and all(imp[2] for imp in imports):
                case["imports_resolve_before_minimum"] = True
    data = {
        "source": "https://github.com/netromdk/vermin (tests/*.py)",
        "commit": VERMIN_COMMIT,
        "licence": "MIT (Copyright (c) 2018 Morten Kristensen)",
        "how": (
            "vermin's test suite (tests/*.py at the commit above) run under CPython 3.13 with "
            "its assertOnlyIn() recorded (scripts/vermin_cases/): every snippet vermin "
            "expects to need Python 3.8-3.14, with the vermin test that asserts it. kind: "
            "syntax, module (modules and submodules), member (module and class attributes), "
            "kwarg, operator (dict | dict, dict |= dict, array('w'), pow with a negative "
            "exponent and a modulus), generic (subscripted classes; vermin asserts these with "
            "eval_annotations on), union (X | Y types; vermin's opt-in union-types feature). "
            "'compiles': compile() on CPython 3.8..3.13, '1' accepted. "
            "'imports_fail_at_minimum': imports the minimum version's own interpreter cannot "
            "resolve (platform-specific names, vermin's pseudo-paths such as 'from asyncio "
            "import loop'). 'imports_resolve_before_minimum': every import already resolves "
            "one version earlier (vermin's minimum follows the documentation)."
        ),
        "kinds": dict(sorted(Counter(c["kind"] for c in ordered).items())),
        "cases": ordered,
    }
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "vermin_cases.json"
    out.write_text(json.dumps(data, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(data["kinds"], len(ordered))


if __name__ == "__main__":
    main()
