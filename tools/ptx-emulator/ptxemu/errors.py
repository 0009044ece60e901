"""Errors of the emulator (not hazards of the kernel: those are reported)."""


class EmulatorError(Exception):
    """The PTX or the launch is outside what the emulator models, or the
    kernel did something that has no defined result (a misaligned or
    out-of-bounds access, a deadlock)."""
