"""Finite-difference gradient checks (to be written)."""


def gradcheck(*a, **k):
    raise NotImplementedError


def gradgradcheck(*a, **k):
    raise NotImplementedError
