"""Run the OpInfo conformance harness (tests/opinfo_harness.py) and print the results as markdown.

    python tools/opinfo_report.py                    # sample_inputs, error_inputs, second order (what CI runs)
    python tools/opinfo_report.py --slow             # and reference_inputs (the slow test)
    python tools/opinfo_report.py --gradgrad         # the second-order cases only
    python tools/opinfo_report.py --write-expected   # rewrite tests/opinfo_expected_failures.txt
    python tools/opinfo_report.py --ops erf atan2 --slow --write-expected   # only these ops' lines

Prints: the op names mapped, the samples run, the cases per class and path, and one row per op
(its tensorgrad spelling, passing cases, failing cases by class) -- the material of the site's
"Supported ops" page (docs/supported_ops.md); then the second order: of the mapped names whose
OpInfo supports gradgrad, how many pass every sample's second derivative, and why each other one
does not.  --write-expected writes every failing case of this run (keeping the listed cases of
sample kinds it did not run); review its diff: a new line is a new failure.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import opinfo_harness as H  # noqa: E402  (tests/ on the path first)


def run(kinds, ops=None):
    started = time.perf_counter()
    mapped = H.mapped_ops(H.load_op_db())
    if ops:  # OpInfo names (an op's variants included) or op ids
        mapped = [m for m in mapped if m[0] in ops or m[1].name in ops]
    results, spelled = {}, {}
    for oid, info, call, description in mapped:
        spelled[oid] = (info.name, description)
        results.update(H.run_op(info, call, kinds=kinds))
    return mapped, spelled, results, time.perf_counter() - started


def report(mapped, spelled, results, seconds, kinds) -> str:
    names = {info.name for _, info, _, _ in mapped}
    samples = {k[:3] for k, v in results.items() if v[0] != "n/a"}
    per_path = Counter((k[3], v[0]) for k, v in results.items() if v[0] != "n/a")
    classes = ("pass", *H.CLASSES)
    ran = {k[0] for k in results}
    unrun = [f"`{oid}`" for oid, *_ in mapped if oid not in ran]
    lines = [
        "## OpInfo conformance",
        "",
        f"Sample kinds run: {', '.join(kinds)} (s: sample_inputs, r: reference_inputs, e: error_inputs); "
        f"{seconds:.0f} s.",
        "",
        f"- OpInfo names mapped: **{len(names)}** ({len(mapped)} OpInfo entries with their variants)",
        f"- samples run: **{len(samples)}** (each on {len(H.PATHS)} paths: {', '.join(H.PATHS)})",
        f"- not applicable: {sum(v[0] == 'n/a' for v in results.values())} "
        "(error_inputs PyTorch's op accepts, or for a Python operator with a non-tensor self; "
        "samples PyTorch's generator fails to make)",
        f"- not run (no float64, float32 or int64 among their dtypes): {', '.join(unrun) or 'none'}",
        "",
        "| path | " + " | ".join(classes) + " |",
        "|---" * (len(classes) + 1) + "|",
    ]
    for path in H.PATHS:
        lines.append(f"| {path} | " + " | ".join(str(per_path[(path, c)]) for c in classes) + " |")
    lines.append("| all | " + " | ".join(str(sum(per_path[(p, c)] for p in H.PATHS)) for c in classes) + " |")
    by_op = defaultdict(Counter)
    for (oid, *_), (cls, _) in results.items():
        by_op[oid][cls] += 1
    lines += ["", "| op | tensorgrad | passing cases | failing cases |", "|---|---|---|---|"]
    for oid, _, _, _ in mapped:
        counts = by_op[oid]
        total = sum(n for c, n in counts.items() if c != "n/a")
        failing = ", ".join(f"{c} {counts[c]}" for c in H.CLASSES if counts[c]) or "-"
        lines.append(f"| `{oid}` | `{spelled[oid][1]}` | {counts['pass']}/{total} | {failing} |")
    if "g" in kinds:
        lines += ["", *second_order(mapped, results)]
    return "\n".join(lines)


def second_order(mapped, results) -> list[str]:
    """The second-order counts: per OpInfo name (its variants together), whether every "g" case passes."""
    names = defaultdict(list)  # name -> its op ids with a second derivative
    for oid, info, _, _ in mapped:
        if H.supports_gradgrad(info):
            names[info.name].append(oid)
    cases = defaultdict(Counter)
    reasons = defaultdict(Counter)
    for (oid, _, sample, _), (cls, reason) in results.items():
        if sample.startswith("g"):
            cases[oid][cls] += 1
            if cls in H.CLASSES:
                reasons[oid][f"{cls}: {reason}"] += 1
    run = lambda o: cases[o]["pass"] + sum(cases[o][c] for c in H.CLASSES)  # noqa: E731
    ran = {name: oids for name, oids in names.items() if any(run(o) for o in oids)}
    failing = sorted(name for name, oids in ran.items() if any(cases[o][c] for o in oids for c in H.CLASSES))
    total = Counter()
    for oids in names.values():
        for o in oids:
            total.update(cases[o])
    passing = len(ran) - len(failing)
    share = f"{100 * passing / len(ran):.1f}%" if ran else "-"
    lines = [
        "## OpInfo second order",
        "",
        f"- OpInfo names mapped whose OpInfo supports gradgrad (in float64; the random ops left out): **{len(names)}** "
        f"({sum(map(len, names.values()))} entries with their variants); with a sample run: {len(ran)}",
        f"- second-order cases (float64 samples, at most {H.MAX_GRADGRAD_SAMPLES} per op, on "
        f"{', '.join(H.GRADGRAD_PATHS)}): " + ", ".join(f"{c} {total[c]}" for c in ("pass", *H.CLASSES, "n/a")),
        f"- names passing every sample's second derivative: **{passing} of {len(ran)}** ({share}); "
        f"with a wrong value: {sum(any(cases[o]['wrong'] for o in ran[n]) for n in failing)}",
    ]
    if failing:
        lines += ["", "| name | failing cases | why |", "|---|---|---|"]
        for name in failing:
            counts = Counter()
            why = Counter()
            for o in ran[name]:
                counts.update({c: cases[o][c] for c in H.CLASSES if cases[o][c]})
                why.update(reasons[o])
            cell = "; ".join(r.replace("|", "\\|")[:100] for r, _ in why.most_common(2))
            lines.append(f"| `{name}` | {', '.join(f'{c} {n}' for c, n in counts.items())} | {cell} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="also run reference_inputs")
    parser.add_argument("--write-expected", action="store_true", help=f"rewrite {H.EXPECTED_FILE.name}")
    parser.add_argument("--gradgrad", action="store_true", help="only the second-order cases")
    parser.add_argument("--ops", nargs="+", metavar="NAME", help="only these OpInfo names (or op ids)")
    args = parser.parse_args(argv)
    kinds = ("s", "e", "g", "r") if args.slow else ("s", "e", "g")
    if args.gradgrad:
        kinds = ("g",)
    mapped, spelled, results, seconds = run(kinds, args.ops)
    print(report(mapped, spelled, results, seconds, kinds))
    if args.write_expected:
        kept = {}
        if H.EXPECTED_FILE.exists():
            ran = {oid for oid, *_ in mapped}
            kept = {k: v for k, v in H.read_expected().items() if k[2][0] not in kinds or k[0] not in ran}
        failing = {k: v for k, v in results.items() if v[0] in H.CLASSES}
        H.EXPECTED_FILE.write_text(H.format_expected({**kept, **failing}))
        print(f"\nwrote {H.EXPECTED_FILE.relative_to(ROOT)}: {len(kept) + len(failing)} cases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
