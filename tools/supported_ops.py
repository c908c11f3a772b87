"""Write docs/supported_ops.md's list of supported ops from the OpInfo conformance harness (tests/opinfo_harness.py).

    python tools/supported_ops.py           # rewrite the generated block of docs/supported_ops.md
    python tools/supported_ops.py --check   # exit 1 if it is out of date (tests/test_opinfo.py)

The block is built from what decides the conformance test, never by hand:
- the OpInfo names tensorgrad spells (the harness's mapping), grouped by how tensorgrad spells them;
- the cases each op runs (its sample_inputs in float64 and float32 and its error_inputs, drawn and
  capped as the test draws them, each on the three paths);
- the cases listed in tests/opinfo_expected_failures.txt (class and reason): the only ones that do
  not pass, since tests/test_opinfo.py fails on any other case that does not pass.
Nothing here runs tensorgrad, so the check takes seconds (drawing the samples).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import opinfo_harness as H  # noqa: E402  (tests/ on the path first)

PAGE = ROOT / "docs" / "supported_ops.md"
BEGIN = "<!-- supported-ops: written by python tools/supported_ops.py from the OpInfo harness; do not edit -->"
END = "<!-- /supported-ops -->"
SPELLINGS = (  # (prefix of the harness's description, heading)
    ("tg.special.", "`tg.special`"),
    ("tg.linalg.", "`tg.linalg`"),
    ("tg.", "`tg.*` functions (most are Tensor methods too)"),
    ("Tensor.", "Tensor methods and properties only"),
    ("F.", "`tg.nn.functional` (`F`)"),
    ("operator", "Python operators and reflected dunders"),
    ("adapted", "others"),
)


def cases_run(info) -> int:
    """The cases tests/test_opinfo.py runs for the op (sample_inputs in float64 and float32, error_inputs,
    and the slow test's reference_inputs in float64), each on every path."""
    dtypes = H._dtypes_run(info, ("float64", "float32"))
    n = sum(H.sample_count(info, "s", dtype) for dtype in dtypes)
    n += sum(H.sample_count(info, "r", dtype) for dtype in dtypes if dtype != "float32")
    return (n + H.sample_count(info, "e", "float64")) * len(H.PATHS)


def build(mapped, expected) -> str:
    # The first-order cases: the second-order ones ("g<i>") are counted by tools/opinfo_report.py.
    expected = {k: v for k, v in expected.items() if not k[2].startswith("g")}
    failing = defaultdict(Counter)
    reasons = defaultdict(Counter)
    for (oid, *_), (cls, reason) in expected.items():
        failing[oid][cls] += 1
        reasons[oid][reason] += 1
    groups = defaultdict(list)
    for oid, info, _, description in mapped:
        spelled = "operator" if H.operator_spelled(info) else description
        heading = next(h for prefix, h in SPELLINGS if spelled.startswith(prefix))
        groups[heading].append(oid.removeprefix("nn.functional."))
    total = {oid: cases_run(info) for oid, info, _, _ in mapped}
    classes = Counter(cls for cls, _ in expected.values())
    names = {info.name for _, info, _, _ in mapped}
    lines = [
        BEGIN,
        f"**{len(names)} OpInfo names** map to tensorgrad ({len(mapped)} entries with their variants). "
        f"`tests/test_opinfo.py` runs **{sum(total.values()):,} cases** of them (each op's sample_inputs in "
        f"float64 and float32, at most {H.MAX_SAMPLES['float64']} and {H.MAX_SAMPLES['float32']}, its "
        f"error_inputs and, in the slow test, its reference_inputs with the extremal values, in float64; each "
        f"on the {len(H.PATHS)} paths: {', '.join(H.PATHS)}). "
        f"Not passing: {sum(classes.values())} ("
        + ", ".join(f"{classes[c]} {c}" for c in H.CLASSES)
        + "), listed in `tests/opinfo_expected_failures.txt` and below; every other case passes or is one "
        "PyTorch itself refuses (an error_input its op accepts, a sample whose own backward raises).",
        "",
    ]
    for _, heading in SPELLINGS:
        if groups[heading]:
            lines.append(f"- {heading}: " + ", ".join(f"`{oid}`" for oid in sorted(groups[heading])))
    lines += ["", "| op | cases | not passing | why |", "|---|---:|---|---|"]
    for oid, *_ in sorted(mapped, key=lambda m: m[0]):
        if failing[oid]:
            counts = ", ".join(f"{failing[oid][c]} {c}" for c in H.CLASSES if failing[oid][c])
            why = "; ".join(_cell(r) for r, _ in reasons[oid].most_common(2))
            more = len(reasons[oid]) - 2
            lines.append(f"| `{oid}` | {total[oid]} | {counts} | {why}{f' (+{more} more)' if more > 0 else ''} |")
    lines.append(END)
    return "\n".join(lines)


def _cell(reason: str) -> str:
    reason = reason.replace("|", "\\|").replace("`", "'")
    return reason if len(reason) <= 90 else reason[:87] + "..."


def current_block() -> str:
    return build(H.mapped_ops(H.load_op_db()), H.read_expected())


def page_block(text: str) -> str | None:
    if BEGIN not in text or END not in text:
        return None
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/supported_ops.md's block is out of date")
    args = parser.parse_args(argv)
    text = PAGE.read_text()
    old, new = page_block(text), current_block()
    if old is None:
        print(f"docs/supported_ops.md has no block between {BEGIN!r} and {END!r}", file=sys.stderr)
        return 1
    if args.check:
        if old != new:
            print("docs/supported_ops.md is out of date: run python tools/supported_ops.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text.replace(old, new))
    print("wrote docs/supported_ops.md's supported ops", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
