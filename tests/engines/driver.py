"""A driver process for the resume test: grades a JSONL file of drafts on the test's
Ray cluster into a Parquet folder (``python -m tests.engines.driver ADDRESS URL
DRAFTS OUT``), so the test can kill it midway and start it again."""

from __future__ import annotations

import functools
import json
import sys

import ray

from gradeloop.integrations.ray import grade_dataset
from tests.engines.helpers import RUBRIC, emulator_judge


def main() -> None:
    address, base_url, drafts, out = sys.argv[1:5]
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    with open(drafts, encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    ds = ray.data.from_items(rows, override_num_blocks=40)
    run = grade_dataset(
        ds, RUBRIC, out, judge=functools.partial(emulator_judge, base_url), batch_size=25
    )
    print(json.dumps({"graded": run.graded, "skipped": run.skipped, "run_id": run.run_id}))


if __name__ == "__main__":
    main()
