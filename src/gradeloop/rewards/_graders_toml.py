"""A translated rubric as a TOML file, what changed in the move kept as comments."""

from __future__ import annotations

from typing import Any

from ._graders import Translation

__all__ = ["rubric_toml"]


def rubric_toml(translation: Translation, source: str) -> str:
    """The rubric of ``translation`` as TOML: a header naming ``source`` and the notes,
    each criterion's notes above it; reads back to the same rubric."""
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"Written by `gradeloop import-graders` from {source}."))
    doc.add(
        tomlkit.comment("Review it: the notes say where gradeloop differs from OpenAI's graders.")
    )
    for note in translation.notes:
        doc.add(tomlkit.comment(note))
    rubric = translation.rubric
    if "pass_score" in rubric:
        doc.add("pass_score", rubric["pass_score"])
    criteria = tomlkit.aot()
    for criterion in rubric["criteria"]:
        criteria.append(_table(criterion, translation.key_notes.get(criterion["key"], [])))
    doc.add("criteria", criteria)
    return tomlkit.dumps(doc)


def _table(criterion: dict[str, Any], notes: list[str]) -> Any:
    import tomlkit

    table = tomlkit.table()
    for note in notes:
        table.add(tomlkit.comment(note))
    for name, value in criterion.items():
        if name == "description" and "\n" in value:
            table.add(name, tomlkit.string(value, multiline=True))
        elif name == "options":
            inline = tomlkit.inline_table()
            inline.update(value)
            table.add(name, inline)
        else:
            table.add(name, value)
    return table
