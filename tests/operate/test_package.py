"""The package as a release builds it: ``python -m build`` and ``twine check`` clean, and the
metadata a company's open-source review looks for (licence, authors, classifiers, project
URLs) in the wheel and the source distribution."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

pytestmark = pytest.mark.long(30)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # Without isolation: the test extra's setuptools builds it, with no download.
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def test_twine_check_passes_strict(dist: Path) -> None:
    files = sorted(str(path) for path in dist.iterdir())
    assert len(files) == 2, files
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_wheel_names_its_licence_authors_classifiers_and_addresses(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
        licences = [name for name in names if name.endswith("licenses/LICENSE")]
        assert licences, names
        assert archive.read(licences[0]) == (ROOT / "LICENSE").read_bytes()
    assert metadata["License-Expression"] == "MIT"
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert metadata["Author"] or metadata["Author-email"]
    classifiers = metadata.get_all("Classifier") or []
    assert "Topic :: Communications :: Chat" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL") or [])
    assert {"Homepage", "Source"} <= set(urls), urls
    assert all(url.startswith("https://") for url in urls.values())
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "slackapp/referee_file.py" in names and "slackapp/referee_main.py" in names


def test_the_source_distribution_carries_the_licence(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(name.endswith("/LICENSE") for name in names), names
