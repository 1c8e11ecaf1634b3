"""A Messages-API emulator in its own process, for benchmarks that time the client.

Started by ``bench_scale.py``: prints its base URL, then answers commands on stdin
(``count`` prints how many requests it received so far; ``quit`` stops it). Every
``/v1/messages`` request gets a valid verdict for the judge keys it was asked about
after ``--latency`` seconds; batch requests succeed the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.emulator

from tests.emulator import Emulator

from gradeloop.testing import verdict_reply


def verdict_for(body: dict[str, Any]) -> Any:
    """A passing verdict naming exactly the keys the request's schema asks for."""
    schema = (body.get("output_config") or {}).get("format", {}).get("schema", {})
    met = schema.get("$defs", {}).get("CriteriaMet", {}).get("required", [])
    return verdict_reply(
        {
            "reasoning": "Every criterion is met; the draft cites its sources.",
            "criteria_met": dict.fromkeys(met, True),
            "passed": True,
            "issues": [],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    emulator = Emulator(latency=args.latency, keep_alive=True)
    emulator.responder = verdict_for
    emulator.batches.outcome = lambda custom_id, params: verdict_for(params)
    print(emulator.base_url, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "count":
            paths = [r.path.split("?")[0] for r in list(emulator.requests)]
            messages = sum(1 for p in paths if p == "/v1/messages")
            print(json.dumps({"messages": messages, "batches": len(paths) - messages}), flush=True)
        elif command == "quit":
            break
    emulator.close()


if __name__ == "__main__":
    main()
