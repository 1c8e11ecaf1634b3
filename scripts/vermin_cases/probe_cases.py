"""Answer, on the interpreter running it, what each case snippet needs from that version.

Input (stdin): a JSON list of sources. Output (stdout): one JSON list, per source
{"compiles": bool, "error": str|None, "imports": [[module, name|null, ok|null], ...]}.

compile() executes nothing. For imports, the named standard-library modules are
imported (never the snippet): ``ok`` is None for modules whose import has side
effects (a browser, a GUI, a __main__), which are never imported.
Run isolated: python -I -S probe_cases.py < sources.json
"""

import ast
import importlib
import importlib.util
import json
import sys
import warnings

SKIP = {
    "antigravity",
    "this",
    "__hello__",
    "__phello__",
    "idlelib",
    "turtledemo",
    "tkinter",
    "turtle",
    "test",
    "lib2to3",
    "ensurepip",
    "venv",
    "webbrowser",
    "pydoc",
    "msilib",
    "winreg",
    "winsound",
    "msvcrt",
    "_winapi",
    "nt",
    "crypt",
    "spwd",
    "ossaudiodev",
}


def skip(module):
    parts = module.split(".")
    return parts[0] in SKIP or "__main__" in parts


def module_ok(module):
    if skip(module):
        return None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError, AttributeError):
        return False
    except Exception:  # a stdlib module that fails to import on this machine
        return None


def name_ok(module, name):
    if skip(module):
        return None
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return False
    except Exception:
        return None
    if hasattr(mod, name):
        return True
    return module_ok(f"{module}.{name}")


def probe(source):
    out = {"compiles": True, "error": None, "imports": []}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<case>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        out["compiles"] = False
        out["error"] = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}"
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out["imports"].append([alias.name, None, module_ok(alias.name)])
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == "__future__":
                continue
            for alias in node.names:
                if alias.name == "*":
                    out["imports"].append([node.module, None, module_ok(node.module)])
                else:
                    found = name_ok(node.module, alias.name)
                    out["imports"].append([node.module, alias.name, found])
    return out


if __name__ == "__main__":
    sources = json.load(sys.stdin)
    json.dump([probe(s) for s in sources], sys.stdout)
