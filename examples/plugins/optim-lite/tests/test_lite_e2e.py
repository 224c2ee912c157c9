"""End to end, through the composed API: ``import ember`` with ember-optim-lite chosen as the
``optim`` slot's provider (each way of choosing it), a classifier trained with
``ember.optim``, and the same training by PyTorch compared. Every run is a child process:
a slot's provider is chosen once per process. (``lite_train.py`` is the program.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from lite_helpers import TESTS, run, run_json

SCRIPT = str(TESTS / "lite_train.py")


def _check_swapped_in(result: dict) -> None:
    assert result["optim_is_plugin"], "ember.optim is not ember_optim_lite"
    assert result["import_is_plugin"], "import ember.optim did not give ember_optim_lite"
    assert result["scheduler_is_plugin"], "ember.optim.lr_scheduler is not the plugin's"
    assert result["late_switch_refused"], "ember.use() switched a slot already in use"
    assert not result["ember_optim_imported"], "the default provider was imported too"
    train = result["train"]
    assert train["optimizer_class"] == "ember_optim_lite.algorithms"
    assert train["last_loss"] < 0.1 * train["first_loss"], train
    assert train["accuracy"] >= 0.95, train
    assert train["final_lr"] == pytest.approx(0.05 * 0.5**3), train  # StepLR(50, 0.5), 150


def test_train_with_ember_optim_env_and_compare_with_pytorch(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    result = run_json([SCRIPT, "--compare"], tmp_path, EMBER_OPTIM="lite")
    _check_swapped_in(result)
    for name, diff in result["vs_pytorch"].items():
        assert diff["param_diff"] < 1e-10, (name, diff)
        assert diff["loss_diff"] < 1e-10, (name, diff)


def test_train_with_ember_use(tmp_path: Path) -> None:
    _check_swapped_in(run_json([SCRIPT, "--select", "use"], tmp_path))


def test_train_with_tool_ember_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "user-project"\n\n'
                                             '[tool.ember]\noptim = "lite"\n')
    _check_swapped_in(run_json([SCRIPT, "--select", "pyproject"], tmp_path))


def test_installing_the_plugin_changes_nothing_by_itself(tmp_path: Path) -> None:
    proc = run(["-c", "import ember, ember_optim; assert ember.optim is ember_optim; "
                      "from importlib.metadata import entry_points; "
                      "names = {ep.name for ep in entry_points(group='ember.slots.optim')}; "
                      "assert {'ember', 'lite'} <= names, names"], tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_unknown_provider_name_is_an_error(tmp_path: Path) -> None:
    proc = run(["-c", "import ember; ember.optim"], tmp_path, EMBER_OPTIM="lit")
    assert proc.returncode != 0
    assert "SlotError" in proc.stderr and "'lite'" in proc.stderr, proc.stderr[-2000:]
