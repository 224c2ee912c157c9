"""Learning-rate schedulers, with PyTorch's names, arguments and semantics.

A scheduler changes the ``"lr"`` of its optimizer's parameter groups each time its
``step()`` is called (once per epoch or per batch, after ``optimizer.step()``). It is
created at epoch 0 (``last_epoch=-1`` means "start"; resuming needs ``"initial_lr"`` in
every group), remembers ``base_lrs`` (the groups' ``initial_lr``) and reports
``get_last_lr()``. ``state_dict()`` is everything but the optimizer.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]

_EPOCH_WARNING = (
    "The epoch parameter in `scheduler.step()` is deprecated: call `scheduler.step()` "
    "without it, once per epoch (or per batch), after `optimizer.step()`.")


def _per_group(optimizer, name: str, value) -> list:
    """``value`` for each parameter group: a list/tuple of one per group, or one for all."""
    groups = optimizer.param_groups
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(groups)


def _set_momentum(group: dict, momentum: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class LRScheduler:
    """The base of the schedulers. A subclass defines ``get_lr()``: the groups' learning
    rates at ``self.last_epoch``, from their current values (chainable form); it may also
    define ``_closed_form_lr()``, the same from ``base_lrs`` alone (used by
    ``step(epoch)``)."""

    def __init__(self, optimizer, last_epoch: int = -1) -> None:
        if not hasattr(optimizer, "param_groups"):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step to epoch 0 done by the constructor; remembers how many steps the
        optimizer had taken, to warn when the scheduler steps first."""
        self._step_count = 0
        self._optimizer_steps_at_start = getattr(self.optimizer, "_lite_step_count", None)
        self.step()

    def state_dict(self) -> dict:
        """The scheduler's attributes, without the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``."""
        return self._last_lr

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def _warn_if_optimizer_did_not_step(self) -> None:
        """Called before ``_step_count`` counts the step: 1 means the first call after the
        constructor's own step."""
        if self._step_count != 1:
            return
        start = self._optimizer_steps_at_start
        if start is not None and getattr(self.optimizer, "_lite_step_count", start) == start:
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. Call "
                "`optimizer.step()` first and `lr_scheduler.step()` after it: in this order "
                "the first value of the schedule is skipped.", UserWarning, stacklevel=3)

    def step(self, epoch: float | None = None) -> None:
        """Moves to the next epoch (or, deprecated, to ``epoch``) and sets the groups'
        learning rates."""
        self._warn_if_optimizer_did_not_step()
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(_EPOCH_WARNING, UserWarning, stacklevel=2)
            values = self._lrs_at(epoch)
        self._apply(values)

    def _lrs_at(self, epoch: float) -> list[float]:
        self.last_epoch = epoch
        closed = getattr(self, "_closed_form_lr", None)
        return closed() if closed is not None else self.get_lr()

    def _apply(self, values: Sequence[float]) -> None:
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler  # the older name


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)``; ``lr_lambda``: one function, or one per group.
    ``state_dict`` keeps the attributes of callable objects (not of plain functions)."""

    def __init__(self, optimizer, lr_lambda: Callable | Sequence[Callable],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else
                               dict(fn.__dict__) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


class MultiplicativeLR(LambdaLR):
    """``lr = lr * lr_lambda(epoch)`` at every epoch after the first."""

    def get_lr(self) -> list[float]:
        if self.last_epoch > 0:
            return [lr * fn(self.last_epoch) for lr, fn in zip(self._lrs(), self.lr_lambdas)]
        return self._lrs()


class StepLR(LRScheduler):
    """Multiplies the learning rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the learning rate by ``gamma`` at each milestone epoch."""

    def __init__(self, optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        times = self.milestones.get(self.last_epoch, 0)
        if times == 0:
            return self._lrs()
        return [lr * self.gamma**times for lr in self._lrs()]

    def _closed_form_lr(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """``lr = base_lr * factor`` for the first ``total_iters`` epochs, ``base_lr`` after."""

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr / self.factor for lr in self._lrs()]

    def _closed_form_lr(self) -> list[float]:
        scale = 1.0 if self.last_epoch >= self.total_iters else self.factor
        return [base * scale for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor of ``base_lr`` goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs, then stays."""

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 "
                             "and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._lrs()]
        if self.last_epoch > self.total_iters:
            return self._lrs()
        span = self.end_factor - self.start_factor
        # the ratio of this epoch's factor to the previous epoch's
        ratio = 1.0 + span / (self.total_iters * self.start_factor
                              + (self.last_epoch - 1) * span)
        return [lr * ratio for lr in self._lrs()]

    def _closed_form_lr(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * done
        return [base * factor for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the learning rate by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return self._lrs()
        now = 1.0 - self.last_epoch / self.total_iters
        before = 1.0 - (self.last_epoch - 1) / self.total_iters
        return [lr * (now / before) ** self.power for lr in self._lrs()]

    def _closed_form_lr(self) -> list[float]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left**self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``, computed
    recursively from the current learning rate (so it composes with other schedulers)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if e == 0:
            return self._lrs()
        if self._step_count == 1 and e > 0:  # resumed: start from the closed form
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:  # the bottom of a period: climb back
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._lrs())]
        ratio = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
        return [ratio * (lr - lo) + lo for lr in self._lrs()]

    def _closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing (SGDR, Loshchilov & Hutter) restarted every ``T_i`` epochs, the
    period growing by ``T_mult`` after each restart (``T_0`` first). ``step(epoch)`` accepts
    fractional epochs (one call per batch)."""

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        phase = math.pi * self.T_cur / self.T_i
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(phase)) / 2
                for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        self._warn_if_optimizer_did_not_step()
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._apply(self.get_lr())


class SequentialLR(LRScheduler):
    """Runs ``schedulers`` one after the other, switching at the ``milestones`` epochs
    (each scheduler restarts from epoch 0 when its turn comes)."""

    def __init__(self, optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got "
                             "no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{type(self).__name__} at index {i} should have "
                                "`optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{type(self).__name__} does not support "
                                 f"`ReduceLROnPlateau` scheduler as it requires additional "
                                 f"kwargs to be specified when calling `step`, but got one at "
                                 f"index {i} in the given schedulers sequence.")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{type(self).__name__} expects all schedulers to belong to the "
                                 f"same optimizer, but got scheduler {type(scheduler).__name__} "
                                 f"at index {i} has a different optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the first steps the schedulers took when they were built, then start the first
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._step_count += 1
            scheduler._apply(scheduler._lrs_at(0))  # its turn: restart it at epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, sd in zip(self._schedulers, saved):
            scheduler.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler of ``schedulers`` at each ``step()`` (their effects
    compose)."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer=None) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{type(self).__name__} at index {i} should have "
                                "`optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{type(self).__name__} does not support "
                                 f"`ReduceLROnPlateau` scheduler as it requires additional "
                                 f"kwargs to be specified when calling `step`, but got one at "
                                 f"index {i} in the given schedulers sequence.")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{type(self).__name__} expects all schedulers to belong to the "
                                 f"same optimizer, but got scheduler {type(scheduler).__name__} "
                                 f"at index {i} has a different optimizer")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = self._lrs()

    def step(self) -> None:  # type: ignore[override]
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._lrs()

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, sd in zip(self._schedulers, saved):
            scheduler.load_state_dict(sd)


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the learning rate by ``factor`` (never below ``min_lr``) when the metric
    given to ``step(metric)`` has not improved (``mode`` ``"min"``/``"max"``, by
    ``threshold``, relative or absolute) for more than ``patience`` epochs; then waits
    ``cooldown`` epochs. Changes smaller than ``eps`` are skipped."""

    def __init__(self, optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | Sequence[float] = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.last_epoch = 0
        self._last_lr = self._lrs()
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch: int | None = None) -> None:  # type: ignore[override]
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._lrs()

    def _reduce_lr(self) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError("The number of param groups in the `optimizer` "
                                   f"({len(self.optimizer.param_groups)}) differs from when "
                                   "`ReduceLROnPlateau` was initialized "
                                   f"({len(self.min_lrs)}), usually due to a new param group "
                                   "being added to the optimizer. Please modify the `min_lrs` "
                                   "field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if rel else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if rel else best + self.threshold)


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017): between ``base_lr`` and ``max_lr`` in cycles
    of ``step_size_up + step_size_down`` steps (``mode`` ``"triangular"``,
    ``"triangular2"``, ``"exp_range"``, or a custom ``scale_fn``). With ``cycle_momentum``
    the momentum (or Adam's beta1) cycles inversely between ``max_momentum`` and
    ``base_momentum``. Step it once per batch."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1) -> None:
        base_lrs = _per_group(optimizer, "base_lr", base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group(optimizer, "max_lr", max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = getattr(optimizer, "defaults", {})
            if "momentum" not in defaults and "betas" not in defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in defaults
            self.base_momentums = _per_group(optimizer, "base_momentum", base_momentum)
            self.max_momentums = _per_group(optimizer, "max_momentum", max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(self.max_momentums, self.base_momentums,
                                              optimizer.param_groups):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1.0 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position in the cycle, [0, 1)
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * rise * scale
               for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums,
                                          self.max_momentums):
                _set_momentum(group, top - (top - bottom) * rise * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict:
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(
            fn, types.FunctionType) else dict(fn.__dict__)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        attrs = state.pop("_scale_fn_custom")
        self.__dict__.update(state)
        if attrs is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(attrs)


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): the learning rate rises from
    ``max_lr / div_factor`` to ``max_lr`` over ``pct_start`` of ``total_steps`` (or
    ``epochs * steps_per_epoch``), then anneals (``"cos"`` or ``"linear"``) to
    ``initial_lr / final_div_factor``; with ``three_phase`` it first comes back down to the
    initial rate. The momentum (or beta1) moves inversely. Step it once per batch;
    stepping past ``total_steps`` is an error."""

    def __init__(self, optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        total = self.total_steps
        rise_end = float(pct_start * total) - 1
        if three_phase:
            self._phases = [
                (rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * total) - 2, "max_lr", "initial_lr", "base_momentum",
                 "max_momentum"),
                (total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        max_lrs = _per_group(optimizer, "max_lr", max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = getattr(optimizer, "defaults", {})
            if "momentum" not in defaults and "betas" not in defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in defaults
            tops = _per_group(optimizer, "max_momentum", max_momentum)
            bottoms = _per_group(optimizer, "base_momentum", base_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(tops, bottoms, optimizer.param_groups):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            begin = 0.0
            for i, (end, lr_from, lr_to, m_from, m_to) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - begin) / (end - begin)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self._anneal(group[m_from], group[m_to], pct),
                                      self.use_beta1)
                    break
                begin = end
        return lrs
