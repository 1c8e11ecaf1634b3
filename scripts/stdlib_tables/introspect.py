"""List what the standard library of the interpreter running this script holds.

Run isolated, once per interpreter (it must stay valid Python 3.8):

    python3.X -I -S introspect.py candidates.json > introspected-3.X.json

(generate.py runs it for every interpreter it is given.)

Output: every module and submodule found on disk (or built in), and for each
public module that imports cleanly: its names, the names of its classes, and the
keyword-capable parameters of its functions, classes and methods (``"**"`` when
one takes ``**kwargs``; null when ``inspect.signature`` cannot tell). Names that
``dir()`` misses are checked with ``hasattr`` against ``candidates.json``:
typeshed's names and every name another interpreter's ``dir()`` showed, so that a
deprecated name a module still serves from its ``__getattr__`` (``urllib.parse.Quoter``
on 3.11-3.13) or an enum alias ``dir()`` hides (``HTTPStatus.REQUEST_ENTITY_TOO_LARGE``
on 3.13) counts as present. Modules that exist only in ``sys.modules`` once the
standard library is imported (``typing.io`` through 3.12, ``os.path``) are listed
and described too. Only the standard library's own modules are imported; modules
whose import has side effects are listed, never imported.
"""

import importlib
import inspect
import json
import os
import pkgutil
import sys
import sysconfig
import warnings

NEVER_IMPORT = {
    "antigravity",
    "this",
    "idlelib",
    "test",
    "turtledemo",
    "__phello__",
    "__hello__",
    "__hello_alias__",
    "__hello_only__",
    "__phello_alias__",
}
ALIASES = ["os.path"]  # modules under a second name, not files of their own
NOT_WALKED = {
    "test",
    "idlelib",
    "turtledemo",
    "lib2to3.tests",
    "tkinter.test",
    "ctypes.test",
    "unittest.test",
    "distutils.tests",
    "sqlite3.test",
}


def stdlib_dirs():
    paths = sysconfig.get_paths()
    dirs = [paths["stdlib"], paths.get("platstdlib", paths["stdlib"])]
    dynload = os.path.join(paths["platstdlib"], "lib-dynload")
    if os.path.isdir(dynload):
        dirs.append(dynload)
    return sorted(set(dirs))


def skip_import(name):
    parts = name.split(".")
    return parts[0] in NEVER_IMPORT or "__main__" in parts or parts[-1] == "__init__"


def quiet_import(name):
    """Import a standard-library module with its warnings and prints silenced."""
    stdout, stderr = sys.stdout, sys.stderr
    with warnings.catch_warnings(), open(os.devnull, "w") as devnull:
        warnings.simplefilter("ignore")
        try:
            sys.stdout = sys.stderr = devnull
            return importlib.import_module(name)
        finally:
            sys.stdout, sys.stderr = stdout, stderr


def all_modules():
    found = set(sys.builtin_module_names)
    for info in pkgutil.iter_modules(stdlib_dirs()):
        if info.name in ("site-packages", "dist-packages"):
            continue
        found.add(info.name)
    todo = sorted(found)
    while todo:
        name = todo.pop()
        if name in NOT_WALKED or (skip_import(name) and name.split(".")[0] in NEVER_IMPORT):
            continue
        try:
            module = quiet_import(name) if not skip_import(name) else None
        except BaseException:
            continue
        path = getattr(module, "__path__", None)
        if not path:
            continue
        for info in pkgutil.iter_modules(path):
            sub = name + "." + info.name
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted(found)


def public(name):
    return not any(p.startswith("_") for p in name.split(".")) or name == "__future__"


def params(obj):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sig = inspect.signature(obj)
    except (TypeError, ValueError, RuntimeError, AttributeError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            out.append(p.name)
        elif p.kind == p.VAR_KEYWORD:
            out.append("**")
    return out


def has(obj, name):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return hasattr(obj, name)
    except BaseException:
        return False


def describe(module, candidates):
    names = set(dir(module))
    names.update(n for n in candidates.get("", ()) if n not in names and has(module, n))
    classes, sigs = {}, {}
    for name in sorted(names):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = getattr(module, name)
        except BaseException:
            continue
        if inspect.isclass(value):
            members = set(dir(value))
            members.update(
                n for n in candidates.get(name, ()) if n not in members and has(value, n)
            )
            own = set(getattr(value, "__dict__", {}))
            classes[name] = {"all": sorted(members), "own": sorted(own & members)}
            sigs[name] = params(value)
            for member in own & members:
                try:
                    attr = inspect.getattr_static(value, member)
                except AttributeError:
                    continue
                if isinstance(attr, (staticmethod, classmethod)):
                    attr = attr.__func__
                if callable(attr):
                    sigs[name + "." + member] = params(attr)
        elif callable(value) and not inspect.ismodule(value):
            sigs[name] = params(value)
    return {"names": sorted(names), "classes": classes, "sigs": sigs}


def main():
    with open(sys.argv[1]) as f:
        candidates = json.load(f)
    modules = all_modules()
    described = {}
    for name in modules + ALIASES:
        describe_one(name, candidates, described)
    # What importing the library registered under names with no file of their own
    # (typing.io, typing.re): importable on this version, so listed as modules.
    registered = sorted(n for n in list(sys.modules) if n not in modules and registered_ok(n))
    for name in registered:
        describe_one(name, candidates, described)
    modules = sorted(set(modules) | set(registered))
    json.dump(
        {"version": sys.version.split()[0], "modules": modules, "described": described}, sys.stdout
    )


def registered_ok(name):
    """A module in sys.modules that its parent module holds under its last name."""
    if "." not in name or not public(name) or skip_import(name):
        return False
    parent_name, _, last = name.rpartition(".")
    parent = sys.modules.get(parent_name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return parent is not None and getattr(parent, last, None) is sys.modules[name]
    except BaseException:
        return False


def describe_one(name, candidates, described):
    if (not public(name) and name != "builtins") or skip_import(name):
        return
    if name.split(".")[0] in NOT_WALKED or name in NOT_WALKED:
        return
    try:
        module = quiet_import(name)
    except BaseException:
        return
    described[name] = describe(module, candidates.get(name, {}))


if __name__ == "__main__":
    main()
