"""Settings: every field checked against its documented range; nothing in the file stops the app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields

import pytest
from conftest import ROOT

from capdesk import limits
from capdesk.session.settings import CHECKS, Settings


def _load(tmp_path, text: str | bytes):
    p = tmp_path / "settings.json"
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p, Settings.load(p)


def test_every_setting_has_a_check():
    assert set(CHECKS) == {f.name for f in fields(Settings)}


@pytest.mark.parametrize("field_name, value", [
    ("sidecar_formats", ["exe"]),
    ("sidecar_formats", "txt"),
    ("sidecar_formats", []),
    ("txt_name", "../../x"),
    ("xmp_name", "/etc/passwd"),
    ("beam", 5000),
    ("beam", 0),
    ("beam", True),
    ("beam", 2.5),
    ("rate", -1),
    ("volume", 7),
    ("confidence_threshold", -0.5),
    ("speech", "shout"),
    ("provider", "rm -rf /"),
    ("lang", "en\n<x>"),
    ("watch_folders", "not a list"),
    ("clipboard", "yes"),
    ("model", "a" * 5000),
])
def test_bad_value_is_reported_and_replaced_by_default(tmp_path, field_name, value):
    p, (s, problem) = _load(tmp_path, json.dumps({field_name: value, "rate": 200, "lang": "de"}
                                                  if field_name not in ("rate", "lang") else {field_name: value}))
    default = getattr(Settings(), field_name)
    assert getattr(s, field_name) == default
    assert problem is not None and field_name in problem and "\n" not in problem and str(p) in problem
    if field_name not in ("rate", "lang"):  # the good values beside the bad one are kept
        assert s.rate == 200 and s.lang == "de"
    assert p.exists(), "a file with one bad value is not set aside: its good values are the user's"


def test_nan_and_infinity_are_refused(tmp_path):
    _, (s, problem) = _load(tmp_path, '{"volume": NaN, "confidence_threshold": Infinity}')
    assert s.volume == 1.0 and s.confidence_threshold == limits.DEFAULT_CONFIDENCE_THRESHOLD
    assert "volume" in problem and "confidence_threshold" in problem


def test_good_values_pass_untouched(tmp_path):
    want = {"beam": limits.BEAM_MAX, "sidecar_formats": ["xmp"], "txt_name": "ext", "xmp_name": "stem",
            "lang": "pt-BR", "provider": "CPUExecutionProvider", "volume": 0, "confidence_threshold": 1,
            "watch_folders": ["/tmp/a"], "speech": "off", "model": "everyday"}
    _, (s, problem) = _load(tmp_path, json.dumps(want))
    assert problem is None
    for k, v in want.items():
        assert getattr(s, k) == v


def test_deeply_nested_json_is_set_aside_not_a_recursion_error(tmp_path):
    p, (s, problem) = _load(tmp_path, '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}")
    assert s == Settings()
    assert "nested too deeply" in problem
    assert not p.exists() and (tmp_path / "settings.json.corrupt").exists()


@pytest.mark.parametrize("text, reason", [
    (b"{not json", "Expecting"),
    (b"[1, 2]", "not a JSON object"),
    (b"\xff\xfe garbage", "codec"),
    (b" " * (limits.SETTINGS_MAX_BYTES + 10), "larger than"),
])
def test_unreadable_file_is_set_aside(tmp_path, text, reason):
    p, (s, problem) = _load(tmp_path, text)
    assert s == Settings() and reason in problem
    assert (tmp_path / "settings.json.corrupt").read_bytes() == text


def test_settings_path_that_is_a_directory(tmp_path):
    p = tmp_path / "settings.json"
    p.mkdir()
    s, problem = Settings.load(p)
    assert s == Settings() and problem and "could not be read" in problem


HOSTILE = {
    "bad-values": '{"sidecar_formats": ["exe"], "txt_name": "../../x", "beam": 5000}',
    "nested-200k": '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_gui_starts_whatever_the_settings_file_holds(tmp_path, kind):
    """The real window, offscreen: built from the hostile file, it shows the problem and runs."""
    pytest.importorskip("PySide6")  # the only test here that needs Qt; the rest run without it
    cfg = tmp_path / "settings.json"
    cfg.write_text(HOSTILE[kind])
    code = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from capdesk.session.settings import Settings\n"
        "from capdesk.gui.main_window import MainWindow\n"
        "app = QApplication([])\n"
        "s, problem = Settings.load()\n"
        "w = MainWindow(s, problem)\n"
        "w.show(); app.processEvents()\n"
        "print('BEAM', s.beam, 'FORMATS', ','.join(s.sidecar_formats), 'TXT', s.txt_name, 'UP', w.isVisible())\n"
        "print('PROBLEM', problem)\n"
    )
    env = dict(os.environ, CAPDESK_SETTINGS=str(cfg), QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "BEAM None FORMATS txt,xmp TXT stem UP True" in r.stdout  # beam 5000 -> the model's own
    assert "PROBLEM " + str(cfg) in r.stdout


def test_beam_unset_means_the_models_own(tmp_path):
    """No beam chosen (the default, or null in the file) is kept as None, which the describer reads as
    "each model's tuned beam"; a chosen beam is kept as chosen."""
    assert Settings().beam is None
    _, (s, problem) = _load(tmp_path, '{"beam": null}')
    assert s.beam is None and problem is None
    _, (s, problem) = _load(tmp_path, json.dumps({"beam": limits.BEAM_MIN}))
    assert s.beam == limits.BEAM_MIN and problem is None
    p = tmp_path / "saved.json"
    Settings(beam=None).save(p)
    assert json.loads(p.read_text())["beam"] is None and Settings.load(p)[0].beam is None


def test_sidecar_options_follow_the_settings():
    s = Settings(sidecar_formats=["xmp"], txt_name="ext", xmp_name="stem", lang="de", ext_descr=True)
    o = s.sidecar_options()
    assert (o.formats, o.txt_name, o.xmp_name, o.lang, o.ext_descr, o.overwrite) == (
        ("xmp",), "ext", "stem", "de", True, False)
    assert s.sidecar_options(overwrite=True, formats=("txt",)).overwrite is True


def test_settings_need_no_qt(tmp_path):
    """Settings load, check and save with PySide6 made unimportable: the CLI and the session use them."""
    cfg = tmp_path / "settings.json"
    cfg.write_text('{"beam": 5000, "lang": "pt-BR"}')
    code = ("import sys; sys.modules['PySide6'] = None\n"
            "from capdesk.session.settings import Settings\n"
            "s, problem = Settings.load()\n"
            "s.save()\n"
            "print(s.beam, s.lang, 'beam' in problem, sorted(m for m in sys.modules if m.startswith('PySide6')))\n")
    env = dict(os.environ, CAPDESK_SETTINGS=str(cfg))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["None", "pt-BR", "True", "['PySide6']"]  # only the blocked entry itself
    assert json.loads(cfg.read_text())["lang"] == "pt-BR"


@pytest.mark.slow  # 3 s measured on two busy cores
def test_the_models_own_beam_unless_one_is_chosen(tmp_path, default_bundle):
    """The window's describer: no beam in Settings means the model's tuned beam (manifest decoding.beam);
    a beam chosen there, as with --beam, is used instead."""
    import shutil

    from capdesk.session.core import Session
    from capdesk.session.tasks import ThreadRunner

    bundle = tmp_path / "tuned"
    shutil.copytree(default_bundle, bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["name"] = "tuned"
    manifest["decoding"]["beam"] = 7
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    for chosen, expected in ((None, 7), (2, 2)):
        session = Session(Settings(model=str(bundle), beam=chosen, ocr="never"), ThreadRunner())
        assert session.describer().primary.beam == expected
    from capdesk.describe.describer import Describer

    assert Describer(str(bundle), beam=None).primary.beam == 7  # the CLI without --beam
