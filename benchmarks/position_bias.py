"""Position bias of the stored SummHay full-context runs: relevant documents at the top, bottom or middle of
the context versus random order, scored with the stored judgments; sensitivity = largest |joint - random|.

Run: python benchmarks/position_bias.py
Writes: benchmarks/results/position_bias.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, SHARED_DATA, write_result  # noqa: E402

from citesum.datasets.summhay import load_haystack  # noqa: E402
from citesum.evaluate.position import STORED_PLACEMENT_KEYS, sensitivity  # noqa: E402
from citesum.evaluate.summhay import score_stored  # noqa: E402

MODELS = ("claude3-opus", "gemini-1.5-pro", "gpt-4o")


def main() -> None:
    haystacks = [load_haystack(SHARED_DATA / "summhay" / t) for t in HAYSTACKS]
    rows = []
    for model in MODELS:
        joint = {p: round(score_stored(haystacks, k.format(model=model))[0].joint, 1)
                 for p, k in STORED_PLACEMENT_KEYS.items()}
        rows.append({"model": model, **joint, "sensitivity": round(sensitivity(joint), 1)})
        print(rows[-1])
    write_result("position_bias", {"placements": dict(STORED_PLACEMENT_KEYS), "rows": rows})


if __name__ == "__main__":
    main()
