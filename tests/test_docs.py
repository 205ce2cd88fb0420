"""The documentation lives in the repository: every relative link in the README and in docs/
resolves to a file that is there, and nothing points at material outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_resolves(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    links = [link for link in LINK.findall(text) if "://" not in link and not link.startswith("#")]
    missing = [link for link in links
               if not (page.parent / link.split("#", 1)[0]).resolve().exists()]
    assert not missing, f"{page.name} links to files that are not in the repository: {missing}"
    assert "../shared" not in text and "spec/rules.md" not in text, page.name


def test_the_core_documents_exist_and_are_linked_from_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("rules.md", "hand-format.md", "architecture.md"):
        assert (REPO / "docs" / name).is_file(), name
        assert f"(docs/{name})" in readme, name
