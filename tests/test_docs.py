"""The code, README, INVARIANTS.md, docs/, benchmarks/ and scripts/ cite only the repository's own
documents, and every citation of a docs page names a page and a heading that exist.

- No file there cites a document outside the repository: the design notes (``DESIGN §n``,
  ``DESIGN.md``), the shared folder beside the checkout (``../shared``), the specification's
  seeds (``seed 000``, ``seeds/``, ``the seed's …``) or their requirement ids (``HC-R18``).
- A citation ``docs/<page>.md §<Heading>`` (in prose, a docstring or a comment, wrapped over
  lines or not) names a page under ``docs/`` and a heading of that page; a markdown link
  ``docs/<page>.md#<anchor>`` (``<page>.md#<anchor>`` inside docs/) names a page and the anchor
  of one of its headings. tests/ is held to this second rule too.
- The README's package map lists every package under ``st2/`` and nothing that is not there.
- No text file there or in tests/ keeps a merge's conflict markers.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from support import REPO

CITING = ("st2", "README.md", "INVARIANTS.md", "docs", "benchmarks", "scripts")
LINKING = CITING + ("tests",)
TEXT_SUFFIXES = {".py", ".md", ".toml", ".tsv", ".txt", ".sh", ".kdl", ".json", ".nix", ""}

OUTSIDE = re.compile(
    r"\bDESIGN(?:\.md)?\b|\.\./shared\b|\b[Ss]eeds?\s*(?:0*\d{1,3}\b|/)|\b[Ss]eed's\b"
    r"|\b[Tt]he seeds?\b(?!\s+(?:stage|problem|fails))|\b(?:HC|OHS|DING)-R\d+\b|\bDQ-[A-Z]*\d+\b"
)
CITATION = re.compile(r"(?<![\w/.-])(?:\.\./)*docs/([\w-]+\.md)(?:[ \t]*(?:\n[ \t#*]*)?§)?")
DOCS_LINK = re.compile(r"\]\((?:\.\./)*(?:docs/)?([\w-]+\.md)#([\w-]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")
BREAK = re.compile(r"[ \t]*\n[ \t#*]*")


def text_files(root: Path, names: tuple[str, ...]) -> list[Path]:
    """Every text file under ``names`` (files or directories) of ``root``, symlinks not followed."""
    found = []
    for name in names:
        path = root / name
        if path.is_file():
            found.append(path)
            continue
        for directory, subdirectories, files in os.walk(path):
            subdirectories[:] = sorted(d for d in subdirectories if d not in ("__pycache__", ".venv"))
            for file in sorted(files):
                candidate = Path(directory) / file
                if candidate.suffix in TEXT_SUFFIXES and not candidate.is_symlink():
                    found.append(candidate)
    return found


def headings(page: Path) -> list[str]:
    """The heading texts of a markdown page, fenced code excluded."""
    found, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.append(match.group(1))
    return found


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces
    to ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def outside_citations(root: Path, names: tuple[str, ...] = CITING) -> list[str]:
    """``file:line: text`` of every line under ``names`` that cites a document outside the repo."""
    found = []
    for path in text_files(root, names):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(root)}:{number}: {line.strip()}"
                  for number, line in enumerate(lines, 1) if OUTSIDE.search(line)]
    return found


def unresolved_citations(root: Path, names: tuple[str, ...] = LINKING) -> list[str]:
    """``file:line: citation`` of every docs citation or link under ``names`` whose page or
    heading does not exist in ``root/docs``."""
    pages = {page.name: headings(page) for page in sorted((root / "docs").glob("*.md"))}
    problems = []
    for path in text_files(root, names):
        if path.resolve() == Path(__file__).resolve():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        where = path.relative_to(root)
        for match in CITATION.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            page = match.group(1)
            if page not in pages:
                problems.append(f"{where}:{line}: docs/{page}: no such page")
                continue
            if not match.group(0).endswith("§"):
                continue
            tail = BREAK.sub(" ", text[match.end(): match.end() + 300])
            fits = [h for h in pages[page] if tail.startswith(h) and not re.match(r"[\w-]", tail[len(h):len(h) + 1])]
            if not fits:
                problems.append(f"{where}:{line}: docs/{page} §{tail.split(')')[0][:60]}: no such heading")
        for match in DOCS_LINK.finditer(text):
            page, fragment = match.groups()
            if page not in pages and not (path.parent == root / "docs" or "docs/" in match.group(0)):
                continue  # a link to another folder's markdown file, not a docs page
            line = text.count("\n", 0, match.start()) + 1
            if page not in pages:
                problems.append(f"{where}:{line}: docs/{page}: no such page")
            elif fragment not in {anchor(h) for h in pages[page]}:
                problems.append(f"{where}:{line}: docs/{page}#{fragment}: no such anchor")
    return problems


MARKER = re.compile(r"^(?:<{7}|>{7}) \S", re.M)


def conflict_markers(root: Path) -> list[str]:
    """``file:line`` of every merge conflict marker line (``<<<<<<< ours``, ``>>>>>>> theirs``)
    left in a text file of the repository (a line of seven ``=`` alone is also markdown's heading
    underline, so only the two ends are looked for: a conflict always leaves both)."""
    problems = []
    for path in text_files(root, LINKING):
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in MARKER.finditer(text):
            problems.append(f"{path.relative_to(root)}:{text.count(chr(10), 0, match.start()) + 1}")
    return problems


def package_map_problems(root: Path) -> list[str]:
    """What the README's "Package map" section gets wrong about the packages under ``st2/``: a
    package (a directory holding ``__init__.py``) it does not list, or a listed path that does not
    exist."""
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Package map\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| [^|]*?`(st2/[\w/.]*)`", section, re.M))
    listed |= set(re.findall(r"^\| `[^`]+`, `(st2/[\w/.]*)`", section, re.M))
    packages = {f"{init.parent.relative_to(root)}/" for init in (root / "st2").rglob("__init__.py")
                if "__pycache__" not in init.parts and init.parent != root / "st2"}
    problems = [f"not in the package map: {package}" for package in sorted(packages - listed)]
    problems += [f"in the package map but not in the tree: {path}" for path in sorted(listed)
                 if not (root / path).exists()]
    return problems


def test_nothing_cites_a_document_outside_the_repository() -> None:
    assert outside_citations(REPO) == []


def test_every_docs_citation_names_an_existing_page_and_heading() -> None:
    assert (REPO / "docs").is_dir()
    assert unresolved_citations(REPO) == []


def test_the_package_map_lists_every_package() -> None:
    assert package_map_problems(REPO) == []


def test_a_package_missing_from_the_map_or_a_stale_row_is_found(tmp_path: Path) -> None:
    for package in ("st2", "st2/bus", "st2/kit", "st2/kit/foreign"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "README.md").write_text(
        "# st2\n\n## Package map\n\n| package | purpose |\n|---|---|\n| `st2/bus/` | mail |\n"
        "| `st2/loose.py`, `st2/kit/` | kit |\n| `st2/gone/` | removed |\n\n## Layout\n\n"
        "| `st2/kit/foreign/` | not the map |\n")
    assert package_map_problems(tmp_path) == [
        "not in the package map: st2/kit/foreign/",
        "in the package map but not in the tree: st2/gone/",
        "in the package map but not in the tree: st2/loose.py",
    ]


def _sample(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "records.md").write_text(
        "# Records\n\n## Harness context\n\n```\n## Not a heading\n```\n\n### Write policy\n\n"
        "## Flow: the supervisor pass\n")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_an_outside_citation_is_found_and_a_seed_stage_word_is_not(tmp_path: Path) -> None:
    root = _sample(tmp_path, {
        "st2/a.py": '"""The record (seed 003 "Harness context discipline")."""\n',
        "st2/b.py": "# the seed's table, in order\n",
        "st2/c.py": "x = 1  # DESIGN.md §4\n",
        "README.md": "see ../shared/LAB.md and (seed 000 HC-R18)\n",
        "scripts/d": "# the `seed` stage; the seed stage; Seed the state; seed problem's reason\n",
        "docs/e.md": "# E\n\nFacts from DESIGN §7.\n",
    })
    assert outside_citations(root) == [
        "st2/a.py:1: \"\"\"The record (seed 003 \"Harness context discipline\").\"\"\"",
        "st2/b.py:1: # the seed's table, in order",
        "st2/c.py:1: x = 1  # DESIGN.md §4",
        "README.md:1: see ../shared/LAB.md and (seed 000 HC-R18)",
        "docs/e.md:3: Facts from DESIGN §7.",
    ]


def test_a_citation_of_a_missing_page_or_heading_is_found(tmp_path: Path) -> None:
    root = _sample(tmp_path, {
        "st2/good.py": '"""Fill (docs/records.md §Harness context), policy (docs/records.md\n'
                       '§Write policy), the pass (docs/records.md §Flow: the supervisor pass)."""\n'
                       "# (docs/records.md §Harness context; issue 21) and docs/records.md\n",
        "README.md": "[the policy](docs/records.md#write-policy) and [the pass](docs/records.md#flow-the-supervisor-pass)\n",
        "st2/bad.py": '"""(docs/records.md §Harness contextual) (docs/nowhere.md §X)\n'
                      '(docs/records.md §Not a heading)"""\n',
        "INVARIANTS.md": "| row ([policy](docs/records.md#write-policies)) |\n",
        "docs/other.md": "# Other\n\nSee [records](records.md#harness-context) and [gone](records.md#gone).\n",
    })
    assert unresolved_citations(root) == [
        "st2/bad.py:1: docs/records.md §Harness contextual: no such heading",
        "st2/bad.py:1: docs/nowhere.md: no such page",
        "st2/bad.py:2: docs/records.md §Not a heading: no such heading",
        "INVARIANTS.md:1: docs/records.md#write-policies: no such anchor",
        "docs/other.md:3: docs/records.md#gone: no such anchor",
    ]


def test_no_file_keeps_a_merge_conflict_marker() -> None:
    assert conflict_markers(REPO) == []


def test_a_conflict_marker_is_found_and_a_markdown_rule_is_not(tmp_path: Path) -> None:
    root = _sample(tmp_path, {"docs/page.md": "# Page\n\nText\n=======\n\n---\n",
                              "st2/mod.py": "x = 1\n<<<<<<< HEAD\ny = 2\n>>>>>>> branch\n"})
    assert conflict_markers(root) == ["st2/mod.py:2", "st2/mod.py:4"]
