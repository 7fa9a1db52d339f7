"""The digest of the lab extension's sources, which its committed build carries.

The package ships the extension prebuilt (`logician_kernel/labextension/`), so installing needs
no Node.js. `build.mjs` writes this digest into the build it makes (`source-digest.txt`), and
`scripts/test.sh` checks that the committed build's digest is that of the sources as they are
now: a source changed without rebuilding and committing the build fails the tests. (The built
files themselves cannot be compared: webpack's container entry is named from absolute paths, so
two checkouts in different folders build different bytes from the same sources.)

    python source_digest.py --write   # after a build (build.mjs does it)
    python source_digest.py --check   # exit 1 when the committed digest is stale
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILT = HERE.parent / "logician_kernel" / "labextension" / "source-digest.txt"
SOURCES = ("src", "style", "schema")
FILES = ("package.json", "yarn.lock", "tsconfig.json", "build.mjs", "install.json")


def digest() -> str:
    """sha256 over every source file's path and bytes, in a fixed order."""
    paths = [HERE / name for name in FILES if (HERE / name).is_file()]
    for folder in SOURCES:
        paths += [p for p in (HERE / folder).rglob("*") if p.is_file()]
    h = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.relative_to(HERE).as_posix()):
        h.update(path.relative_to(HERE).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def committed() -> str | None:
    """The digest in the committed build (git's HEAD), or the file's when git cannot say."""
    rel = BUILT.relative_to(HERE.parent).as_posix()
    try:
        out = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=HERE.parent,
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return BUILT.read_text().strip() if BUILT.is_file() else None


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        BUILT.write_text(digest() + "\n")
        return 0
    if argv == ["--check"]:
        want, have = digest(), committed()
        if want == have:
            return 0
        print(f"the committed lab extension was built from other sources (its digest {have}, "
              f"the sources' {want}): rebuild it (cd labextension && jlpm build:prod) and "
              "commit logician_kernel/labextension/", file=sys.stderr)
        return 1
    print("usage: source_digest.py --write | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
