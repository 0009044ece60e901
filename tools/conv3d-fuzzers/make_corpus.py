#!/usr/bin/env python3
"""Seed corpus for the conv3d fuzzers: every module of the lit tests.

Each .mlir file under test/ is split at its `// -----` markers (as
conv3d-opt --split-input-file does); each part, with its comment lines
(RUN, CHECK, expected-error) dropped, becomes one seed file. Both valid
and invalid modules are kept: the invalid ones sit next to verifier
boundaries, where mutations are most useful.

usage: make_corpus.py TEST_DIR OUT_DIR
"""
import hashlib
import os
import sys


def seeds(test_dir):
    for dirpath, _, files in os.walk(test_dir):
        for name in sorted(files):
            if not name.endswith(".mlir"):
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                text = f.read()
            for part in text.split("// -----"):
                lines = [l for l in part.splitlines()
                         if not l.lstrip().startswith("//")]
                body = "\n".join(lines).strip()
                if body:
                    yield body + "\n"


def main():
    test_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    count = 0
    for seed in seeds(test_dir):
        digest = hashlib.sha1(seed.encode()).hexdigest()
        with open(os.path.join(out_dir, digest), "w", encoding="utf-8") as f:
            f.write(seed)
        count += 1
    print(f"make_corpus.py: {count} seeds in {out_dir}")


if __name__ == "__main__":
    main()
