"""sm_100a tensor memory and tcgen05 (not yet emulated)."""
from .errors import EmulatorError


def install(ctx):
    ctx.extensions['tcgen05'] = Tcgen05(ctx)


class Tcgen05:
    def __init__(self, ctx):
        self.ctx = ctx

    def reset(self):
        pass

    def progress(self):
        return False

    def on_exit(self, idx):
        pass

    def compile(self, inst):
        if inst.mods[0] == 'tcgen05':
            raise EmulatorError('instruction not emulated: %r' % inst)
        return None
