"""End to end, through the composed API: ``import ember`` with ember-data-threaded chosen as
the ``data`` slot's provider (each way of choosing it), a classifier trained on batches of
``ember.utils.data.DataLoader``, and the batches compared with PyTorch's DataLoader. Every
run is a child process: a slot's provider is chosen once per process.
(``threaded_train.py`` is the program.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from threaded_helpers import TESTS, run, run_json

SCRIPT = str(TESTS / "threaded_train.py")


def _check_swapped_in(result: dict) -> None:
    assert result["data_is_plugin"], "ember.data is not ember_data_threaded"
    assert result["import_is_plugin"], "import ember.data did not give ember_data_threaded"
    assert result["utils_data_is_plugin"], "ember.utils.data is not ember_data_threaded"
    assert result["loader_is_plugin"], "ember.utils.data.DataLoader is not the plugin's"
    assert result["datasets_is_plugin"], "import ember.utils.data.datasets: not the plugin's"
    assert result["late_switch_refused"], "ember.use() switched a slot already in use"
    train = result["train"]
    assert train["loader_class"] == "ember_data_threaded.dataloader.DataLoader"
    assert train["batches_per_epoch"] == 10 and train["samples_seen"] == 15 * 300
    assert train["last_epoch_loss"] < 0.2 * train["first_epoch_loss"], train
    assert train["accuracy"] >= 0.95, train


def test_train_with_ember_data_env_and_compare_with_pytorch(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    result = run_json([SCRIPT, "--compare"], tmp_path, EMBER_DATA="threaded")
    _check_swapped_in(result)
    assert result["optim_provider"] == "ember_optim"
    compared = result["vs_pytorch"]
    assert compared["batches_equal"] and compared["batches"] == 10, compared
    assert compared["param_diff"] < 1e-10, compared


def test_train_with_ember_use(tmp_path: Path) -> None:
    _check_swapped_in(run_json([SCRIPT, "--select", "use"], tmp_path))


def test_train_with_tool_ember_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "user-project"\n\n'
                                             '[tool.ember]\ndata = "threaded"\n')
    _check_swapped_in(run_json([SCRIPT, "--select", "pyproject"], tmp_path))


def test_train_with_both_example_plugins(tmp_path: Path) -> None:
    """Two slots replaced at once: this data loader and ember-optim-lite's optimizers."""
    if importlib.util.find_spec("ember_optim_lite") is None:
        pytest.skip("ember-optim-lite (examples/plugins/optim-lite) is not installed")
    result = run_json([SCRIPT], tmp_path, EMBER_DATA="threaded", EMBER_OPTIM="lite")
    _check_swapped_in(result)
    assert result["optim_provider"] == "ember_optim_lite"


def test_installing_the_plugin_changes_nothing_by_itself(tmp_path: Path) -> None:
    proc = run(["-c", "import ember, ember_data; assert ember.data is ember_data; "
                      "assert ember.utils.data is ember_data; "
                      "from importlib.metadata import entry_points; "
                      "names = {ep.name for ep in entry_points(group='ember.slots.data')}; "
                      "assert {'ember', 'threaded'} <= names, names"], tmp_path)
    assert proc.returncode == 0, proc.stderr
