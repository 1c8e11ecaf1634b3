"""Build ``benchmarks/data/cpython_prose.json``: 200 prose paragraphs of CPython's docs.

Run by hand (the JSON is committed; nothing runs this in tests or CI)::

    python scripts/cpython_prose/make_paragraphs.py PO_DIR --source REPO@COMMIT

``PO_DIR`` is a working tree of one of the Python documentation translation
projects (python/python-docs-XX on GitHub, branch 3.12). Their ``.po`` files hold,
as ``msgid`` entries, every paragraph of CPython's ``Doc/`` reStructuredText
exactly as Sphinx's gettext builder extracted it (one paragraph a ``msgid``, its
``Doc/`` file and line in the ``#:`` comment above it). Only those English
``msgid`` texts are read; the translations are ignored.

A paragraph qualifies when it comes from the tutorial, library, howto, reference,
FAQ, using or glossary pages, reads as prose (ends like a sentence, has at least
one inner sentence-ending mark followed by a space, 80-1,200 characters) and holds
no markup this script cannot render faithfully (substitutions, footnotes, section
references without a title). A seeded sample of the qualifying ones is kept, in
document order.

Each kept paragraph keeps its reStructuredText (``rst``) and gets a Markdown
rendering (``text``) that ``benchmarks/bench_prose.py`` measures: ````literal```` becomes a
code span, a role (``:func:`md5```) becomes its visible words without code
formatting (``md5``, ``~a.b`` as ``b``, ``title <target>`` as ``title``), an
external link becomes a Markdown link, a final ``::`` becomes ``:``. Roles are
rendered as bare words on purpose: it is the harder case for a sentence splitter
(``... and blake2s. md5 is normally available``), and how the issue that asked for
this benchmark measured it.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
from pathlib import Path

SECTIONS = ("tutorial", "library", "howto", "reference", "faq", "using", "glossary")
OUT = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "cpython_prose.json"

_ROLE = re.compile(r":(?:[a-z]+:)?([a-z]+):`([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``")
_EXT_LINK = re.compile(r"`([^`<]+?)\s*<([^`>]+)>`__?")
_NAMED_REF = re.compile(r"`([^`]+)`__?")
_BARE_REF = re.compile(r"\b([A-Za-z0-9][\w.-]*[A-Za-z0-9])__?(?=[\s.,;:)]|$)")
_DEFAULT_ROLE = re.compile(r"(?<![`\w])`([^`]+)`(?![`_\w])")
_UNSUPPORTED = re.compile(r"\|[\w -]+\||\[#|\]_|:(?:ref|doc|numref):`[^`<]+`|\n")
_INNER_END = re.compile(r"[.!?][\"')]*\s")


def read_po(path: Path) -> tuple[str, list[tuple[str, str]]]:
    """The file's POT creation date and its ``(source reference, msgid)`` pairs."""
    pot = ""
    entries: list[tuple[str, str]] = []
    ref = ""
    current: list[str] | None = None
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if current is not None and line.startswith('"'):
            current.append(ast.literal_eval(line))
            continue
        if current is not None:
            text = "".join(current)
            if text and ref:  # the header entry has an empty msgid and no reference
                entries.append((ref, text))
            current = None
        if line.startswith("#: "):
            ref = line[3:].split()[0]
        elif line.startswith('"POT-Creation-Date: '):
            pot = ast.literal_eval(line).split(": ", 1)[1].strip()
        elif line.startswith("msgid "):
            current = [ast.literal_eval(line[6:])]
        elif not line.strip():
            ref = ""
    return pot, entries


def role_text(role: str, content: str) -> str:
    """What Sphinx shows for a role: its title, or its target as the role renders it."""
    m = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content, re.S)
    if m and m.group(1):
        return m.group(1)
    if role in ("pep", "rfc"):
        return f"{role.upper()} {content.split('#', 1)[0]}"
    if role == "abbr":
        return content.split(" (", 1)[0]
    if role in ("samp", "file"):
        return content.replace("{", "").replace("}", "")  # braces mark variable parts
    if role == "menuselection":
        return content.replace("-->", "‣")
    content = content.lstrip("!").lstrip(".")  # "!x": no link; ".x": a relative target
    if content.startswith("~"):
        content = content[1:].rsplit(".", 1)[-1]
    return content


def to_markdown(rst: str) -> str:
    """The Markdown rendering of one reStructuredText paragraph (see the module doc)."""
    literals: list[str] = []

    def keep(m: re.Match[str]) -> str:
        literals.append(m.group(1))
        return f"\x00{len(literals) - 1}\x00"

    def keep_role(m: re.Match[str]) -> str:
        shown = role_text(m.group(1), m.group(2))
        literals.append(shown)
        return f"\x01{len(literals) - 1}\x01"  # set aside: "__init__" is no link name

    text = _LITERAL.sub(keep, rst)
    text = _ROLE.sub(keep_role, text)
    text = _EXT_LINK.sub(lambda m: f"[{m.group(1)}]({m.group(2)})", text)
    text = _NAMED_REF.sub(r"\1", text)
    text = _DEFAULT_ROLE.sub(r"\1", text)
    text = _BARE_REF.sub(r"\1", text)
    text = text.replace("\\ ", "")
    text = re.sub(r"\\(.)", r"\1", text)
    if text.endswith("::"):
        text = text[:-2].rstrip() + ":" if not text[:-2].endswith(" ") else text[:-2].rstrip()
    text = re.sub("\x00(\\d+)\x00", lambda m: f"`{literals[int(m.group(1))]}`", text)
    text = re.sub("\x01(\\d+)\x01", lambda m: literals[int(m.group(1))], text)
    return " ".join(text.split())


def qualifies(ref: str, rst: str) -> bool:
    """Whether a ``msgid`` is a prose paragraph this script renders faithfully."""
    section = ref.split("/", 1)[0] if "/" in ref else ref.split(".rst", 1)[0]
    if section not in SECTIONS:
        return False
    body = rst.rstrip("\"')")
    return (
        80 <= len(rst) <= 1200
        and body[-1:] in (".", "!", "?", ":")
        and (rst[:1].isalnum() or rst.startswith(("*", ":", "`", '"', "(")))
        and _INNER_END.search(to_markdown(rst)[:-1]) is not None
        and _UNSUPPORTED.search(rst) is None
        and "::" not in rst[:-2]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("po_dir", type=Path, help="working tree of a python-docs-XX project")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--source", default="", help="repository and commit, for the record")
    args = parser.parse_args()
    found: list[dict[str, str]] = []
    seen: set[str] = set()
    for path in sorted(args.po_dir.rglob("*.po")):
        pot, entries = read_po(path)
        for ref, rst in entries:
            if rst in seen or not qualifies(ref, rst):
                continue
            seen.add(rst)
            found.append({"id": f"Doc/{ref}", "pot": pot, "rst": rst})
    sample = random.Random(args.seed).sample(range(len(found)), args.count)
    kept = [found[i] for i in sorted(sample)]
    for item in kept:
        item["text"] = to_markdown(item["rst"])
    OUT.write_text(
        json.dumps(
            {
                "source": args.source,
                "qualifying": len(found),
                "seed": args.seed,
                "paragraphs": kept,
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(found)} qualifying paragraphs; {len(kept)} written to {OUT}")


if __name__ == "__main__":
    main()
