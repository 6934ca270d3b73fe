"""Teaching from the window: where training is not installed the dialog says so before anything
starts, and a finished fine-tune is never made the model in use (routing decides, by its verdict)."""

from __future__ import annotations

import pytest
from conftest import SAMPLES

from capdesk.session import messages
from capdesk.session.jobs import TeachJob
from capdesk.session.settings import Settings
from capdesk.training_hint import training_missing, training_unavailable


def test_the_missing_training_message_names_the_cpu_build():
    msg = training_missing(ImportError("No module named 'torch'"))
    assert "download.pytorch.org/whl/cpu" in msg and "capdesk[train]" in msg


def test_training_unavailable_is_found_without_importing_torch(monkeypatch):
    import importlib.util
    import sys

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    reason = training_unavailable()
    assert reason and "PyTorch" in reason
    monkeypatch.setattr(importlib.util, "find_spec", real)
    assert training_unavailable() is None or "torch" not in sys.modules


def test_teach_dialog_says_training_is_missing_before_start(qtbot, monkeypatch, tmp_path):
    from capdesk.gui import dialogs
    from capdesk.gui.dialogs import teach
    from capdesk.gui.main_window import MainWindow

    monkeypatch.setenv("CAPDESK_SETTINGS", str(tmp_path / "settings.json"))
    monkeypatch.setattr(teach, "training_unavailable", lambda: "training needs PyTorch (test)")
    w = MainWindow(Settings(speech="off", ocr="never"))
    qtbot.addWidget(w)
    said = []
    w.session.message.connect(said.append)
    dlg = dialogs.TeachDialog(w)
    qtbot.addWidget(dlg)
    assert not dlg.start_btn.isEnabled()
    assert dlg.status.text() == "Not available in this install: training needs PyTorch (test)"
    # Said once, in a sentence: nothing "stopped" (nothing started), no pip commands read aloud.
    spoken = [m.text for m in said]
    assert spoken == [messages.TEACH_UNAVAILABLE] and "stopped" not in spoken[0] and "pip" not in spoken[0]


class _Runner:
    def run(self, work, on_done, on_failed):  # pragma: no cover - not used here
        raise AssertionError


class _Session:
    def __init__(self) -> None:
        self.settings = Settings(model="everyday")
        self.said: list[str] = []
        self.applied = 0
        self.runner = _Runner()

    def say(self, text: str) -> None:
        self.said.append(text)

    def apply_settings(self) -> None:
        self.applied += 1


@pytest.mark.parametrize("verdict", [
    "better on your pictures, no worse on others: installed as 'mine' for automatic use",
    "not better: CIDEr went from 0.83 to 0.57: not installed for automatic use; installed to be used only when named",
])
def test_a_finished_fine_tune_is_not_made_the_model_in_use(verdict):
    session = _Session()
    job = TeachJob(session, str(SAMPLES), "everyday", "mine", 1)
    job._done(({"name": "mine", "finetune": {"verdict": verdict},
                "metrics": {"heldout": {"before": {"CIDEr": 0.8}, "after": {"CIDEr": 0.6}}}}, ""))
    assert session.settings.model == "everyday"  # routing decides, by the verdict
    assert session.applied == 1  # the describer is loaded afresh, so routing sees the new model
    assert session.said == [messages.teach_finished(verdict)]
    assert verdict.split(":")[0][1:] in session.said[0]


def test_models_dialog_removes_a_taught_model_and_refuses_a_shipped_one(qtbot, monkeypatch, tmp_path, default_bundle):
    from capdesk.gui.dialogs import ModelsDialog
    from capdesk.gui.main_window import MainWindow
    from capdesk.model.bundle import discover
    from capdesk.model.concepts import copy_without_concepts
    from capdesk.model.install import install

    monkeypatch.setenv("CAPDESK_SETTINGS", str(tmp_path / "settings.json"))
    install(str(copy_without_concepts(default_bundle, tmp_path / "mine", name="mine")))
    w = MainWindow(Settings(speech="off", ocr="never", model="mine"))
    qtbot.addWidget(w)
    said = []
    w.session.message.connect(said.append)
    dlg = ModelsDialog(w)
    qtbot.addWidget(dlg)
    dlg.ask = lambda question: "mine" in question
    names = [dlg.list.item(i).data(256) for i in range(dlg.list.count())]
    dlg.list.setCurrentRow(names.index("everyday"))
    assert not dlg.remove_selected()  # shipped: refused, saying why
    assert "Not removed" in dlg.info.text() and "everyday" in [b.name for b in discover()[0]]
    dlg.list.setCurrentRow(names.index("mine"))
    assert dlg.remove_selected()
    assert "mine" not in [b.name for b in discover()[0]]
    assert w.settings.model == "" and "Automatic" in dlg.info.text()
    assert any("removed model 'mine'" in m.text.lower() for m in said)


def test_teach_on_a_folder_without_captions_is_answered_at_once_in_the_window(qtbot, monkeypatch, tmp_path):
    import shutil

    from conftest import SAMPLES

    from capdesk.gui import dialogs
    from capdesk.gui.main_window import MainWindow
    from capdesk.session.jobs import captions_problem

    monkeypatch.setenv("CAPDESK_SETTINGS", str(tmp_path / "settings.json"))
    pics = tmp_path / "pics"
    pics.mkdir()
    for n in ("chelsea.png", "coffee.png"):
        shutil.copy(SAMPLES / n, pics / n)
    assert "none of the 2 pictures" in captions_problem(str(pics))
    assert "not a folder" in captions_problem(str(tmp_path / "nowhere"))
    (pics / "chelsea.txt").write_text("a cat on a rug\n", encoding="utf-8")
    assert captions_problem(str(pics)) is None
    (pics / "chelsea.txt").unlink()

    w = MainWindow(Settings(speech="off", ocr="never"))
    qtbot.addWidget(w)
    said = []
    w.session.message.connect(said.append)
    dlg = dialogs.TeachDialog(w)
    qtbot.addWidget(dlg)
    if not dlg.start_btn.isEnabled():
        pytest.skip("training is not installed here: the dialog says so before Start (tested above)")
    dlg.folder.setPlainText(str(pics)) if hasattr(dlg.folder, "setPlainText") else dlg.folder.setText(str(pics))
    dlg.start()
    assert dlg.status.text().startswith("Teaching cannot start: none of the 2 pictures")
    assert dlg.start_btn.isEnabled() and not dlg.job.running
    assert said[-1].text == dlg.status.text() and "see above" not in said[-1].text


def _teach_dialog(qtbot, monkeypatch, tmp_path):
    from capdesk.gui import dialogs
    from capdesk.gui.main_window import MainWindow

    monkeypatch.setenv("CAPDESK_SETTINGS", str(tmp_path / "settings.json"))
    w = MainWindow(Settings(speech="off", ocr="never"))
    qtbot.addWidget(w)
    dlg = dialogs.TeachDialog(w)
    qtbot.addWidget(dlg)
    return dlg


def test_teach_says_the_minimum_before_start_and_names_each_field_once(qtbot, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QLabel

    from capdesk.training_hint import MIN_TEACH_PICTURES

    dlg = _teach_dialog(qtbot, monkeypatch, tmp_path)
    labels = dlg.findChildren(QLabel)
    # Said before Start, in the dialog's introduction (which Orca reads as the dialog opens) and on Start.
    assert any(f"At least {MIN_TEACH_PICTURES} pictures with alt text are needed" in lb.text() for lb in labels)
    assert f"at least {MIN_TEACH_PICTURES} pictures" in dlg.start_btn.accessibleDescription()
    buddies = {lb.buddy(): lb.text() for lb in labels if lb.buddy() is not None}
    for field, name in ((dlg.epochs, "Rounds (epochs)"), (dlg.name, "New model name"), (dlg.base, "Start from")):
        # One name, the label's own words: a name in other words beside the label was heard as the label twice.
        assert field.accessibleName() == name
        assert buddies[field].replace("&", "").rstrip(":") == name
        assert not any(word in field.accessibleDescription().lower() for word in name.lower().split()
                       if len(word) > 3 and word != "(epochs)"), field.accessibleDescription()
    assert "stops early" in dlg.epochs.accessibleDescription()


def test_a_finished_teach_shows_the_verdict_the_installed_name_and_what_models_can_do(qtbot, monkeypatch, tmp_path):
    dlg = _teach_dialog(qtbot, monkeypatch, tmp_path)
    verdict = ("not proved better than everyday: its captions repeat themselves: not installed for automatic use; "
               "installed as 'mine' to be used only when chosen")
    manifest = {"name": "mine", "finetune": {
        "verdict": verdict, "proved": False, "automatic": False, "next": "fewer_rounds",
        "where": "on your 5 held-out pictures (not learnt from), everyday -> new, as CapDesk describes",
        "deciding": ['captions that repeat themselves 0 -> 3 of 5, such as "a black and black ..."',
                     "CIDEr (closeness to your captions) 0.37 -> 0.90, at least +0.10 needed"]}}
    dlg.bar.setRange(0, 100)
    dlg.bar.setValue(30)  # stopped early: it stopped improving
    dlg._finished(manifest, messages.teach_finished(verdict))
    assert dlg.bar.value() == dlg.bar.maximum() == 1  # finished is whole, not 30%
    assert dlg.status.text() == ("Done. Not proved better than everyday: its captions repeat themselves: not "
                                 "installed for automatic use; installed as 'mine' to be used only when chosen.")
    shown = dlg.outcome.text()
    assert dlg.outcome.isVisibleTo(dlg) and dlg.outcome.accessibleName() == f"Teaching outcome: {shown}"
    assert shown.startswith("Why, on your 5 held-out pictures (not learnt from), everyday -> new, as CapDesk "
                            "describes: captions that repeat themselves 0 -> 3 of 5")
    assert "Next: teach again with fewer rounds (10) or more pictures." in shown
    assert ("Tools > Models… (Ctrl+M) lists 'mine': select it to read its figures, Use this model to describe "
            "every picture with it (until then it describes only when chosen there), or Remove… to take it away."
            in shown)
    proved = {"name": "mine", "finetune": {**manifest["finetune"], "proved": True, "automatic": True, "next": "none"}}
    dlg._finished(proved, "Done.")
    assert "Nothing to do: Automatic hands it the pictures like yours." in dlg.outcome.text()
    assert "until then" not in dlg.outcome.text()
    dlg._finished(None, "Teaching stopped: cancelled")
    assert dlg.bar.value() == 0
