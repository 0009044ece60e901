#!/usr/bin/env python3
"""Prints the files under a folder, one relative path a line, sorted."""
import os
import sys

root = sys.argv[1]
for path in sorted(os.path.relpath(os.path.join(d, f), root)
                   for d, _, files in os.walk(root) for f in files):
    print(path)
