"""Prints the names of a benchmark suite's shapes (bench/shapes.json), in
order, for the loops of the pinned-picks tests."""
import json
import sys

with open(sys.argv[1]) as f:
    print(" ".join(shape["name"] for shape in json.load(f)["shapes"]))
