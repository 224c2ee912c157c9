"""PyTorch's ModuleInfo database run against ember_nn.

Each ModuleInfo of ``module_db`` (it ships in the torch wheel; it imports ``expecttest``)
generates float64 samples with torch, for training and for eval mode: constructor arguments
and forward inputs. For each sample the harness builds torch's module and ember_nn's module
of the same class name from the converted arguments (tensors, dtypes, torch functions, torch
modules), casts both to float64 (as PyTorch's own module tests do), copies the torch
module's state (parameters and buffers, by ``state_dict`` key: the key sets must match) into
Ember's, and runs forward in the sample's mode. It compares the outputs and the buffers
after the forward (running statistics) with their dtype and shape, within float64 tolerance
(rtol = atol = 1e-7), then the gradients of sum(output * g) (g one random tensor per
differentiable output, the same for both) of the inputs that require grad and of every
parameter, by name.

A sample is scored when torch passes it against torch (a second module seeded otherwise,
given the first one's state, run with another seed): that drops the samples torch refuses
and those whose forward is random (dropout in training mode, FractionalMaxPool without
``_random_samples``). A ModuleInfo is scored when at least one of its samples is, and Ember
passes it when it passes every scored sample: the denominator of the score is the modules
PyTorch passes under the same harness.

Categories: by the file of ``torch.nn.modules`` that defines the class (``cls.__module__``),
attention modules counted with the transformers.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch

import ember
import ember_nn
from opinfo import harness as opinfo

SEED, OTHER_SEED = 0, 1  # torch's run, and the torch-against-torch run

EXCLUDED_PREFIXES = {
    "Lazy": "lazy modules infer their parameters' shapes in the first forward; ember_nn has "
            "no uninitialized parameters",
}

CATEGORIES = {  # torch.nn.modules.<file> -> category
    "activation": "activation",
    "loss": "loss",
    "conv": "conv",
    "pooling": "pooling",
    "padding": "padding",
    "batchnorm": "normalization",
    "instancenorm": "normalization",
    "normalization": "normalization",
    "rnn": "rnn",
    "transformer": "transformer/attention",
    "sparse": "embedding",
}


def module_db():
    """PyTorch's ModuleInfos (imported on first use: the import takes seconds)."""
    from torch.testing._internal.common_modules import module_db as db

    return db


def key_of(info) -> str:
    """The ModuleInfo's key: its class name ('Conv2d' for nn.Conv2d), '.variant' added for a
    variant."""
    name = info.name.removeprefix("nn.")
    variant = getattr(info, "variant_test_name", "")
    return f"{name}.{variant}" if variant else name


def category_of(cls: type) -> str:
    """activation, loss, conv, pooling, padding, normalization, rnn, transformer/attention,
    embedding or other, for a torch.nn module class."""
    if "Attention" in cls.__name__:
        return "transformer/attention"  # MultiheadAttention is defined in activation.py
    return CATEGORIES.get(cls.__module__.rsplit(".", 1)[-1], "other")


def excluded(info) -> str | None:
    """Why the harness does not run this ModuleInfo at all, or None."""
    for prefix, why in EXCLUDED_PREFIXES.items():
        if key_of(info).startswith(prefix):
            return why
    return None


def samples(info, training: bool, limit: int | None) -> list[tuple[int, object]]:
    """(index, ModuleInput) for up to ``limit`` (None: all) of the samples of info in the
    mode, spread evenly over the generator's list, which varies the constructor options
    along it; index is the sample's position in that list. [] when the generator fails."""
    try:
        made = info.module_inputs_func(info, device="cpu", dtype=torch.float64,
                                       requires_grad=True, training=training)
    except Exception:  # noqa: BLE001 - no samples for this mode
        return []
    n = len(made)
    if limit is None or n <= limit:
        picked = range(n)
    else:
        picked = sorted({round(k * (n - 1) / max(limit - 1, 1)) for k in range(limit)})
    return [(i, made[i]) for i in picked]


# ----------------------------------------------------------------------------- conversion


def _torch_function(x) -> bool:
    module = getattr(x, "__module__", None) or ""
    return callable(x) and not isinstance(x, type) and module.startswith("torch")


def _ember_function(fn):
    got = getattr(ember_nn.functional, getattr(fn, "__name__", ""), None)
    if got is None:
        raise opinfo.Unsupported(f"torch function {fn!r}: ember_nn.functional has none")
    return got


def _transformer_layer_arguments(layer) -> tuple[tuple, dict]:
    """The constructor arguments of a torch Transformer{Encoder,Decoder}Layer, read back from
    its submodules (TransformerEncoder's samples pass a built layer)."""
    attn = layer.self_attn
    return (attn.embed_dim, attn.num_heads), {
        "dim_feedforward": layer.linear1.out_features,
        "dropout": layer.dropout.p,
        "activation": layer.activation,
        "layer_norm_eps": layer.norm1.eps,
        "batch_first": attn.batch_first,
        "norm_first": layer.norm_first,
        "bias": layer.linear1.bias is not None,
        "dtype": layer.linear1.weight.dtype,
    }


REBUILT = {
    "TransformerEncoderLayer": _transformer_layer_arguments,
    "TransformerDecoderLayer": _transformer_layer_arguments,
}


def _ember_module(m: torch.nn.Module):
    """ember_nn's module of m's class built with m's constructor arguments (REBUILT knows
    them), for a sample that passes a torch module to a constructor."""
    name = type(m).__name__
    cls = getattr(ember_nn, name, None)
    if cls is None or name not in REBUILT:
        raise opinfo.Unsupported(f"a torch {name} argument")
    args, kwargs = REBUILT[name](m)
    return cls(*convert(ember, args), **convert(ember, kwargs))


def convert(lib, x, grad: bool = False, leaves: list | None = None, memo: dict | None = None):
    """x (a sample's constructor or forward arguments) for lib (ember, or torch for a fresh
    copy): opinfo.convert's conversions (tensors requiring grad become leaves, appended to
    ``leaves``), and torch modules (ember_nn's rebuilt; for torch a deep copy) and torch
    functions (ember_nn.functional's of the name). A tensor passed twice is converted once
    (``memo``), so that the aliasing of the sample's arguments is kept."""
    memo = {} if memo is None else memo
    if id(x) in memo:
        return memo[id(x)]
    if isinstance(x, torch.nn.Module):
        out = copy.deepcopy(x) if lib is torch else _ember_module(x)
    elif isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        items = [convert(lib, v, grad, leaves, memo) for v in x]
        out = items if isinstance(x, list) else tuple(items)
    elif isinstance(x, dict):
        out = {k: convert(lib, v, grad, leaves, memo) for k, v in x.items()}
    elif _torch_function(x):
        out = x if lib is torch else _ember_function(x)
    else:
        out = opinfo.convert(lib, x, grad, leaves)
    if isinstance(x, (torch.Tensor, torch.nn.Module)):
        memo[id(x)] = out
    return out


def _float64(lib):
    return torch.float64 if lib is torch else ember.float64


def _from_numpy(lib, a: np.ndarray):
    return torch.from_numpy(a) if lib is torch else ember.from_numpy(a)


# ----------------------------------------------------------------------------- running


class Divergence(Exception):
    """A difference found before the outputs exist (the state_dict keys)."""


class StageError(Exception):
    """The module raised at a stage (constructor, load_state_dict, forward, backward); the
    message names the stage and the exception."""


def _stage(name: str, fn):
    try:
        return fn()
    except (Divergence, opinfo.Unsupported):
        raise
    except Exception as e:  # noqa: BLE001 - reported with the stage
        raise StageError(f"{name}: {opinfo._short(e)}") from e


@dataclass
class Run:
    """One module's run of one sample: its state before the forward (torch's, to copy into
    the others), its output, its buffers after the forward, the flat positions of the
    outputs that require grad, and the gradients by name ('input i' for the i-th input that
    requires grad, else the parameter's name)."""

    out: object
    buffers: dict
    differentiable: tuple
    grads: dict
    state: dict = field(default_factory=dict)


def _load(lib, module, state: dict) -> None:
    """state (torch's state_dict) copied into module; their key sets must match."""
    mine, theirs = set(module.state_dict()), set(state)
    if mine != theirs:
        parts = [f"only torch has {sorted(theirs - mine)}" if theirs - mine else "",
                 f"only Ember has {sorted(mine - theirs)}" if mine - theirs else ""]
        raise Divergence("state_dict keys differ: " + "; ".join(p for p in parts if p))
    converted = {k: convert(lib, v) for k, v in state.items()}
    _stage("load_state_dict", lambda: module.load_state_dict(converted))


def _gradients(lib, module, out, leaves: list) -> tuple[tuple, dict]:
    """(positions, grads): the flat positions of the floating outputs that require grad, and
    the gradients of sum(output * g) over them of the input leaves and of the parameters
    that require grad, by name (None where unused). g is drawn from a fixed seed by the
    outputs' shapes, so every run of a sample draws the same."""
    flat = opinfo._flatten(out)
    positions = tuple(i for i, o in enumerate(flat) if opinfo._floating(o) and o.requires_grad)
    named = [(f"input {i}", t) for i, t in enumerate(leaves)]
    named += [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    if not positions or not named:
        return positions, {}
    rng = np.random.default_rng(7)
    cots = [_from_numpy(lib, rng.standard_normal(tuple(flat[i].shape))).to(flat[i].dtype)
            for i in positions]
    got = lib.autograd.grad([flat[i] for i in positions], [t for _, t in named], cots,
                            allow_unused=True)
    return positions, {n: g for (n, _), g in zip(named, got)}


def run_module(lib, info, mi, training: bool, seed: int, state: dict | None = None) -> Run:
    """info's module in lib (torch, or ember_nn's of the class name) on the sample mi: built
    from the converted constructor arguments, cast to float64, given ``state`` (a torch
    state_dict) unless None, run forward in the mode (torch seeded with ``seed``) and
    differentiated. Raises StageError, Divergence or opinfo.Unsupported."""
    cls = info.module_cls if lib is torch else getattr(ember_nn, info.module_cls.__name__)
    ctor, fwd = mi.constructor_input, mi.forward_input
    torch.manual_seed(seed)
    args, kwargs = convert(lib, (list(ctor.args), dict(ctor.kwargs)))
    module = _stage("constructor", lambda: cls(*args, **kwargs).to(_float64(lib)))
    if state is not None:
        _load(lib, module, state)
    module.train(training)
    leaves: list = []
    fargs, fkwargs = convert(lib, (list(fwd.args), dict(fwd.kwargs)), True, leaves)
    before = ({k: v.detach().clone() for k, v in module.state_dict().items()}
              if lib is torch else {})
    torch.manual_seed(seed)
    out = _stage("forward", lambda: module(*fargs, **fkwargs))
    buffers = dict(module.named_buffers())
    positions, grads = _stage("backward", lambda: _gradients(lib, module, out, leaves))
    return Run(out, buffers, positions, grads, before)


# ----------------------------------------------------------------------------- comparing


def _grad_difference(name: str, got: dict, want) -> str | None:
    if name not in got:
        return f"grad of {name}: Ember's does not require grad"
    g = got[name]
    if g is None or want is None:  # unused: the other one must be zero
        other = want if g is None else g
        if other is not None and np.any(opinfo._numpy(other) != 0):
            return f"grad of {name}: {'Ember' if g is None else 'torch'} has none"
        return None
    return opinfo.compare(g, want, f"grad of {name}")


def difference(got: Run, want: Run) -> str | None:
    """The first difference of got from want (torch's run): outputs, buffers after the
    forward, which outputs require grad, gradients; None when they agree."""
    diff = opinfo.compare(got.out, want.out)
    if diff is not None:
        return diff
    for name, w in want.buffers.items():
        if name in got.buffers:
            diff = opinfo.compare(got.buffers[name], w, f"buffer {name} after forward")
            if diff is not None:
                return diff
    if got.differentiable != want.differentiable:
        return (f"outputs requiring grad: {list(got.differentiable)}, torch's: "
                f"{list(want.differentiable)}")
    for name, w in want.grads.items():
        diff = _grad_difference(name, got.grads, w)
        if diff is not None:
            return diff
    return None


def check(lib, info, mi, training: bool, want: Run) -> opinfo.Outcome:
    """lib's module (ember_nn's, or torch's again, seeded otherwise) on the sample against
    torch's run ``want``: 'pass', 'fail' (a difference) or 'error' (it raised)."""
    try:
        got = run_module(lib, info, mi, training, OTHER_SEED, want.state)
    except Divergence as e:
        return opinfo.Outcome("fail", str(e))
    except opinfo.Unsupported as e:
        return opinfo.Outcome("error", f"arguments: cannot convert {e}")
    except StageError as e:
        return opinfo.Outcome("error", str(e))
    diff = difference(got, want)
    return opinfo.Outcome("pass") if diff is None else opinfo.Outcome("fail", diff)


def reference(info, mi, training: bool) -> tuple[Run | None, opinfo.Outcome]:
    """torch's run of the sample (None when torch refuses it) and torch against torch:
    'pass' when the sample is scored."""
    try:
        want = run_module(torch, info, mi, training, SEED)
    except Exception as e:  # noqa: BLE001 - torch refuses the sample: not scored
        return None, opinfo.Outcome("none", f"torch: {opinfo._short(e)}")
    return want, check(torch, info, mi, training, want)


# ----------------------------------------------------------------------------- scoring


@dataclass
class Score:
    """One ModuleInfo scored: ``samples`` is how many of its samples torch passes against
    torch (``scored`` when any; ``reason``: why the first other one is not), ``passed`` when
    Ember passes them all, ``failure`` the first Ember fails and how many."""

    key: str
    category: str
    samples: int = 0
    passed: bool = False
    failure: str | None = None
    reason: str | None = None

    @property
    def scored(self) -> bool:
        return self.samples > 0


def _where(training: bool, index: int, mi) -> str:
    """'train sample 3 (reduction_sum)': the mode, the index in module_inputs_func's list
    and the sample's description."""
    desc = f" ({mi.desc})" if getattr(mi, "desc", "") else ""
    return f"{'train' if training else 'eval'} sample {index}{desc}"


def score(info, *, limit: int | None = None) -> Score:
    """info scored on up to ``limit`` (None: all) samples per mode, training then eval."""
    result = Score(key_of(info), category_of(info.module_cls))
    name = info.module_cls.__name__
    present = hasattr(ember_nn, name)
    failures = []
    for training in (True, False):
        for index, mi in samples(info, training, limit):
            where = _where(training, index, mi)
            want, ref = reference(info, mi, training)
            if ref.status != "pass":
                result.reason = result.reason or f"{where}: {ref.detail}"
                continue
            result.samples += 1
            if present:
                got = check(ember, info, mi, training, want)
                if got.status != "pass":
                    failures.append(f"{where}: {got.detail}")
    if not present:
        failures = [f"missing: ember_nn has no {name}"]
    result.passed = result.scored and not failures
    if failures and result.scored:
        more = f" (and {len(failures) - 1} more of {result.samples} samples)"
        result.failure = failures[0] + (more if len(failures) > 1 else "")
    return result


def scored_modules() -> dict:
    """The ModuleInfos the harness runs (EXCLUDED_PREFIXES says why not the others), by
    key."""
    return {key_of(info): info for info in module_db() if excluded(info) is None}


def excluded_modules() -> dict[str, str]:
    """The ModuleInfos the harness does not run, by key, with the reason."""
    return {key_of(info): excluded(info) for info in module_db() if excluded(info) is not None}
