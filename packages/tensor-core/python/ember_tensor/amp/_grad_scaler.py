"""``GradScaler``: dynamic loss scaling for mixed-precision training, with
``torch.amp.GradScaler``'s arguments, schedule, errors and state dict.

Each iteration: ``scaler.scale(loss).backward()``; optionally ``scaler.unscale_(opt)`` (to clip
the true gradients); ``scaler.step(opt)`` unscales if needed and skips ``opt.step()`` when a
gradient is inf/NaN; ``scaler.update()`` then backs the scale off (after a skipped step) or
grows it (after ``growth_interval`` steps in a row without one). Works on CPU and CUDA tensors.
"""

from __future__ import annotations

import enum
import warnings
from typing import Any

import ember_tensor as et


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales losses by ``init_scale`` (a float32 scalar tensor on ``device``) and adapts the
    scale: times ``backoff_factor`` after a step with inf/NaN gradients, times
    ``growth_factor`` after ``growth_interval`` clean steps. ``enabled=False`` makes every
    method a pass-through; ``device="cuda"`` without a GPU warns and disables, as in PyTorch.
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = str(device)
        self._enabled = bool(enabled)
        if self._enabled and self._device.startswith("cuda"):
            from .. import cuda

            if not cuda.is_available():
                warnings.warn(
                    "ember.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: Any = None  # lazily made on the device of the first scaled output
        self._growth_tracker: Any = None
        self._per_optimizer_states: dict[int, dict[str, Any]] = {}

    # -- scaling ------------------------------------------------------------------------

    def _lazy_init(self, device: Any) -> None:
        self._scale = et.full((), self._init_scale, dtype=et.float32, device=device)
        self._growth_tracker = et.full((), self._init_growth_tracker, dtype=et.int32, device=device)

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or an iterable of them, nested) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, et.Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)

        def apply(val: Any) -> Any:
            if isinstance(val, et.Tensor):
                if self._scale is None:
                    self._lazy_init(val.device)
                return val * self._scale.to(val.device)
            if isinstance(val, (list, tuple)):
                return type(val)(apply(v) for v in val)
            if hasattr(val, "__iter__") and not isinstance(val, (str, bytes)):
                return map(apply, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    def _check_scale(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did "
                "not use scaler.scale(loss or outputs) earlier in the iteration."
            )

    def _unscale_grads(self, optimizer: Any, inv_scale: Any, allow_fp16: bool) -> dict:
        found: dict[str, Any] = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = getattr(p, "grad", None)
                if g is None:
                    continue
                if not allow_fp16 and g.dtype == et.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                key = str(g.device)
                if key not in found:
                    found[key] = et.zeros((1,), dtype=et.float32, device=g.device)
                bad = et.logical_not(et.isfinite(g)).any()
                found[key] = et.maximum(found[key], bad.to(et.float32))
                g.mul_(inv_scale.to(g.device))
        return found

    def unscale_(self, optimizer: Any) -> None:
        """Divides ``optimizer``'s gradients by the scale in place (once per ``update()``) and
        records whether any of them is inf/NaN."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, unless one is inf/NaN
        (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(float(v.item()) for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Any = None) -> None:
        """Adapts the scale for the next iteration (or sets it to ``new_scale``: a float, or a
        one-element float32 tensor that does not require grad)."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, (int, float)):
                self._scale.fill_(float(new_scale))
            else:
                if not (
                    isinstance(new_scale, et.Tensor)
                    and new_scale.numel() == 1
                    and new_scale.dtype == et.float32
                    and not new_scale.requires_grad
                ):
                    raise AssertionError(
                        "new_scale should be a float or a 1-element FloatTensor with "
                        "requires_grad=False."
                    )
                self._scale.copy_(new_scale.reshape(()))
        else:
            found = [
                f
                for state in self._per_optimizer_states.values()
                for f in state["found_inf_per_device"].values()
            ]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = any(float(f.item()) for f in found)
            self._update_scale(found_inf)
        self._per_optimizer_states = {}

    def _update_scale(self, found_inf: bool) -> None:
        if found_inf:
            self._scale.mul_(self._backoff_factor)
            self._growth_tracker.fill_(0)
            return
        successful = int(self._growth_tracker.item()) + 1
        if successful == self._growth_interval:
            grown = self._scale * self._growth_factor
            if bool(et.isfinite(grown).item()):  # never grow to inf
                self._scale.copy_(grown)
            self._growth_tracker.fill_(0)
        else:
            self._growth_tracker.fill_(successful)

    # -- accessors and state --------------------------------------------------------------

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` ({} when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(self._init_growth_tracker)
