"""Every citation in the repository resolves inside the repository.

- "seed NNN §X" (docstrings, comments, narration, the README, docs/seed_methods.toml) names a
  section that docs/seeds.md lists for that seed (a step number or a range may follow the name).
- Every ``module.py:Qualified.name`` docs/seeds.md gives as a section's home exists.
- "DESIGN.md" is cited as docs/DESIGN.md, and a "DESIGN.md §N" names a numbered heading there.
- Nothing points outside the repository: no path into the team's shared folder, no machine path.
"""

from __future__ import annotations

import ast
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SEEDS_MD = REPO / "docs" / "seeds.md"
DESIGN_MD = REPO / "docs" / "DESIGN.md"

_SEED_HEADING = re.compile(r"^## seed (\d{3})\b")
_SECTION_CELL = re.compile(r"^\| `§([^`]+)` \|")
_SEED_REF = re.compile(r"\bseed (\d{3})\b")


def tracked_text_files() -> list[Path]:
    """The repository's files as git knows them (falls back to a walk outside a checkout)."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout.split()
        paths = [REPO / p for p in out]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in REPO.rglob("*") if ".git" not in p.parts and ".venv" not in p.parts]
    return [p for p in paths if p.is_file() and p.suffix in {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ""}
            and p.stat().st_size < 2_000_000]


def seed_sections() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in SEEDS_MD.read_text(encoding="utf-8").splitlines():
        heading = _SEED_HEADING.match(line)
        if heading:
            current = heading.group(1)
            sections[current] = []
            continue
        cell = _SECTION_CELL.match(line)
        if cell and current is not None:
            sections[current].append(cell.group(1))
    return sections


def resolves(text: str, names: list[str]) -> bool:
    """``text`` (what follows "§") starts with one of ``names`` at a word boundary."""
    for name in names:
        if not text.startswith(name):
            continue
        rest = text[len(name):]
        if not rest or not (rest[0].isalnum() or rest[0] == "_" or re.match(r"\.\d", rest)):
            return True
    return False


def citations(text: str) -> list[tuple[int, str, str]]:
    """(line number, seed, text after §) for each "seed NNN §…", including "… / §Y" chains."""
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in _SEED_REF.finditer(line):
            pos = m.end()
            while True:
                gap = re.match(r"\s*§", line[pos:])
                if not gap:
                    break
                start = pos + gap.end()
                found.append((lineno, m.group(1), line[start:]))
                # A chained section of the same seed: "§5.1 elect / §5.2 failover 1".
                chain = re.match(r"[^§]{0,40}?(?=[/,;]\s*§)[/,;]", line[start:])
                if not chain or "seed " in chain.group(0) or ".md" in chain.group(0):
                    break
                pos = start + chain.end()
    return found


def test_seeds_md_lists_sections_for_all_five_seeds():
    sections = seed_sections()
    assert sorted(sections) == ["000", "001", "002", "003", "004"]
    assert all(len(names) >= 5 for names in sections.values()), sections
    assert {"makeLeaders", "makeFollowers", "becomeLeaderOrFollower"} <= set(sections["000"])
    assert {"5.2", "5.3.2.2", "5.4.5"} <= set(sections["001"])
    assert {"1", "2.1", "2.2", "2.3"} <= set(sections["004"])


def test_every_seed_citation_names_a_listed_section():
    sections = seed_sections()
    bad = []
    count = 0
    for path in tracked_text_files():
        if path == SEEDS_MD:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in _SEED_REF.finditer(line):
                if m.group(1) not in sections:
                    bad.append(f"{path.relative_to(REPO)}:{lineno}: no seed {m.group(1)}")
        for lineno, seed, after in citations(text):
            count += 1
            if seed in sections and not resolves(after, sections[seed]):
                bad.append(f"{path.relative_to(REPO)}:{lineno}: seed {seed} §{after[:50]}")
    assert count > 150  # the scan sees the tree's citations (the narration alone has dozens)
    assert bad == []


def test_seed_methods_toml_sections_resolve():
    sections = seed_sections()
    data = tomllib.loads((REPO / "docs" / "seed_methods.toml").read_text(encoding="utf-8"))
    bad = [(m["seed"], m["section"]) for m in data["method"] if not resolves(m["section"], sections[m["seed"]])]
    assert bad == []


def _qualnames(path: Path) -> set[str]:
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source)
    except SystemError:  # CPython 3.11.7's spurious "AST constructor recursion depth mismatch"
        tree = ast.parse(source)
    names: set[str] = set()

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(prefix + child.name)
                if isinstance(child, ast.ClassDef):
                    walk(child, prefix + child.name + ".")

    walk(tree, "")
    return names


def homes_in_seeds_md() -> list[tuple[str, str]]:
    """(module, qualified name) for each home in the tables' last column.

    A cell may continue with ``.other`` (same class) or ``Other.name`` (same module)."""
    homes = []
    for line in SEEDS_MD.read_text(encoding="utf-8").splitlines():
        if not _SECTION_CELL.match(line):
            continue
        module = cls = None
        for token in re.findall(r"`([^`]+)`", line.rsplit("|", 2)[1]):
            full = re.fullmatch(r"((?:[a-z_]+/)*[a-z_]+\.py)(?::([A-Za-z_][A-Za-z0-9_.]*))?", token)
            if full:
                module = full.group(1)
                qual = full.group(2)
                cls = qual.split(".")[0] if qual and "." in qual else None
                homes.append((module, qual or ""))
            elif module and re.fullmatch(r"\.[a-z_][a-z0-9_]*", token) and cls:
                homes.append((module, cls + token))
            elif module and re.fullmatch(r"[A-Z][A-Za-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?", token):
                cls = token.split(".")[0]
                homes.append((module, token))
    return homes


def test_every_home_in_seeds_md_exists():
    homes = homes_in_seeds_md()
    assert len(homes) > 80
    missing = []
    for module, qualname in homes:
        path = REPO / "kafka_ref" / module
        if not path.exists():
            missing.append(f"{module} (no such module)")
        elif qualname and qualname not in _qualnames(path):
            missing.append(f"{module}:{qualname}")
    assert missing == []


def test_design_md_citations_point_into_docs():
    design = DESIGN_MD.read_text(encoding="utf-8")
    headings = set(re.findall(r"^#+ (\d+(?:\.\d+)*)\.? ", design, flags=re.M))
    headings |= {f"1.{n}" for n in re.findall(r"^(\d+)\. \*\*", design.split("## 2.")[0], flags=re.M)}
    bad = []
    for path in tracked_text_files():
        if path in (DESIGN_MD, Path(__file__)):
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for m in re.finditer(r"(\S*)DESIGN\.md(?: §(\d+(?:\.\d+)*))?", line):
                prefix, section = m.group(1), m.group(2)
                if not prefix.endswith("docs/") and path.parent != DESIGN_MD.parent:
                    bad.append(f"{path.relative_to(REPO)}:{lineno}: cite docs/DESIGN.md")
                if section and section not in headings:
                    bad.append(f"{path.relative_to(REPO)}:{lineno}: docs/DESIGN.md has no §{section}")
            if "NOTES" + ".md" in line:
                bad.append(f"{path.relative_to(REPO)}:{lineno}: NOTES.md is not in the repository")
    assert bad == []


_OUTSIDE = re.compile("|".join([
    re.escape(".." + "/shared"),
    r"(?<![\w.])/" + "work/",
    r"(?<![\w.])/" + "home/",
    r"(?<![\w.])/" + "root/",
    r"(?<![\w.])/" + "Users/",
    r"(?<![\w.])/" + "mnt/",
]))


def test_nothing_points_outside_the_repository():
    bad = []
    for path in tracked_text_files():
        for lineno, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if _OUTSIDE.search(line):
                bad.append(f"{path.relative_to(REPO)}:{lineno}: {line.strip()[:80]}")
    assert bad == []


@pytest.mark.parametrize("text, names, expected", [
    ("makeFollowers 4", ["makeFollowers"], True),
    ("makeLeaders", ["makeLeader"], False),
    ("makeLeader 1-6", ["makeLeader", "makeLeaders"], True),
    ("5.3.2.1–5.3.2.2", ["5.3.2"], False),
    ("5.3.2.1–5.3.2.2", ["5.3.2.1"], True),
    ("2.2 step 6", ["2.2"], True),
    ("成为 leader", ["becoming leader"], False),
])
def test_section_matching(text, names, expected):
    assert resolves(text, names) is expected


def test_chained_citations_are_checked_against_their_seed():
    found = citations("see [seed 001 §5.1 elect / §5.2 failover 1] and seed 004 §2.2 step 6")
    assert [(seed, after.split()[0]) for _, seed, after in found] == [("001", "5.1"), ("001", "5.2"), ("004", "2.2")]
