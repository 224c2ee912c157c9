"""Forward-mode AD (dual numbers). Placeholder until implemented: no dual levels exist."""

_levels = 0


def propagate(op, kind, args, result):
    raise NotImplementedError
