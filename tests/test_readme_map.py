"""The map of the engine (docs/study.md) names only files that exist (a renamed or moved file fails here);
the README's set-up and test commands are the ones CI runs; the README stays a front page."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def map_rows():
    text = (ROOT / "docs" / "study.md").read_text(encoding="utf-8")
    section = text.split("## Map of the engine", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|") and "`" in line]


def named_paths():
    """Each row names full paths in its file column and, in its description, files of the folder
    the row is about (`devices.py` in the tensorgrad/backend/ row)."""
    paths = []
    for row in map_rows():
        cells = [c.strip() for c in row.strip("|").split("|")]
        heads = re.findall(r"`([^`]+)`", cells[1])
        folder = next((h for h in heads if h.endswith("/")), None)
        paths += heads
        for name in re.findall(r"`([\w/]+\.py)`", cells[2]):
            paths.append(name if "/" in name and not folder else (folder or "") + name)
    return paths


def test_the_map_names_every_file_that_exists():
    paths = named_paths()
    assert len(paths) > 60  # the map is parsed (its rows, and the files inside each folder row)
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"docs/study.md's map names files that do not exist: {missing}"


def test_every_ops_file_is_on_the_map():
    on_map = {Path(p).name for p in named_paths() if p.startswith("tensorgrad/ops/")}
    files = {p.name for p in (ROOT / "tensorgrad/ops").glob("*.py") if p.name != "__init__.py"}
    assert files <= on_map, f"ops files missing from the map in docs/study.md: {sorted(files - on_map)}"


def test_ci_runs_the_readmes_test_command_in_a_fresh_venv():
    """CI runs the README's set-up and test commands word for word, as a newcomer would."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in setup.splitlines() if line.startswith("    python3 -m ")]
    venv, test = commands[0], next(c for c in commands if "pytest" in c)
    assert venv.startswith("python3 -m venv ") and venv in ci, venv
    assert test in [line.strip().removesuffix(" || exit 1") for line in ci], test
    assert ci.index(venv) < [line.strip().removesuffix(" || exit 1") for line in ci].index(test)


def test_the_readme_is_a_front_page():
    """At most ~250 lines; its one table is examples/reproduce.py's, as the program wrote it, and its
    picture is the file tools/results_figures.py writes (both from benchmarks/reproduce_cpu.txt)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    printed = (ROOT / "benchmarks" / "reproduce_cpu.txt").read_text(encoding="utf-8")
    table = printed[printed.rindex("| stage | params") :].strip()
    assert table in readme, "README.md's table is not the one in benchmarks/reproduce_cpu.txt"
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert pictures == ["docs/_static/loss_curves.png"] and (ROOT / pictures[0]).is_file(), pictures
    for target in re.findall(r"\]\((docs/[^)#]+|CHANGELOG.md)", readme):
        assert (ROOT / target).is_file(), f"README.md links to {target}, which does not exist"
