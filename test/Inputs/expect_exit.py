#!/usr/bin/env python3
"""Runs a command and checks its exit status: expect_exit.py STATUS CMD...

Prints the command's stdout and stderr (in that order, both to stdout, so a
test can pipe them into FileCheck) and exits 0 when the command exited with
STATUS, 1 otherwise (with a message naming the status it got). A command
killed by a signal never matches.
"""

import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    expected = int(sys.argv[1])
    proc = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    sys.stdout.write(proc.stdout.decode(errors="replace"))
    sys.stdout.write(proc.stderr.decode(errors="replace"))
    if proc.returncode != expected:
        print("expect_exit.py: expected exit status %d, got %d"
              % (expected, proc.returncode))
        return 1
    print("expect_exit.py: exit status %d" % expected)
    return 0


if __name__ == "__main__":
    sys.exit(main())
