"""bench_ray.py's code-only workload, importable alone: a process that grades it with
``grade_many`` for the baseline loads gradeloop and nothing of the benchmark's.

``python benchmarks/_ray_workload.py N [JOIN]`` prints the seconds ``grade_many``
takes on the first ``N`` drafts (of ``JOIN`` pieces each) in this fresh process.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from gradeloop import Rubric, grade_many

CODE = Rubric.from_dict(
    {
        "criteria": [
            {
                "key": "short",
                "description": "No sentence over 25 words.",
                "checker": "sentence_len",
                "options": {"max_words": 25},
            },
            {
                "key": "code_runs",
                "description": "Every sample is valid Python.",
                "checker": "code_runs",
            },
        ]
    }
)


def drafts(n: int, join: int = 1) -> list[dict[str, Any]]:
    """``n`` different drafts of ``join`` pieces each; a piece is a short paragraph,
    one code sample and a closing line, about 200 characters (``join=8``: about
    1,640, the size of the shipped example's draft, 1,585)."""
    out = []
    for i in range(n):
        text = "\n\n".join(_piece(i * join + k) for k in range(join))
        out.append({"id": f"d{i:06d}", "draft": text, "task": "Write a note."})
    return out


def _piece(i: int) -> str:
    body = " ".join(f"word{(i * 7 + j) % 101}" for j in range(12 + i % 20))
    return f"Draft {i}. {body}.\n\n```python\nprint({i})\n```\n\nSee section {i % 9}."


if __name__ == "__main__":
    join = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    texts = [row["draft"] for row in drafts(int(sys.argv[1]), join)]
    start = time.perf_counter()
    grade_many(texts, CODE)
    print(time.perf_counter() - start)
