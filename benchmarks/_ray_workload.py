"""bench_ray.py's code-only workload, importable alone: a process that grades it with
``grade_many`` for the baseline loads gradeloop and nothing of the benchmark's.

``python benchmarks/_ray_workload.py N`` prints the seconds ``grade_many`` takes on
the first ``N`` drafts in this fresh process.
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


def drafts(n: int) -> list[dict[str, Any]]:
    """``n`` different drafts of about 400 characters, one code sample each."""
    out = []
    for i in range(n):
        body = " ".join(f"word{(i * 7 + j) % 101}" for j in range(12 + i % 20))
        text = f"Draft {i}. {body}.\n\n```python\nprint({i})\n```\n\nSee section {i % 9}."
        out.append({"id": f"d{i:06d}", "draft": text, "task": "Write a note."})
    return out


if __name__ == "__main__":
    texts = [row["draft"] for row in drafts(int(sys.argv[1]))]
    start = time.perf_counter()
    grade_many(texts, CODE)
    print(time.perf_counter() - start)
