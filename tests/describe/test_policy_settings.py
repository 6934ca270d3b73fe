"""The policy's settings: one frozen object per model, every number with the measurement that set it."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest
from conftest import SAMPLES, run_cli
from evidence_helpers import evidence

from capdesk.describe import composer, policy
from capdesk.describe.settings import DEFAULT, PolicySettings
from capdesk.model.bundle import BundleError
from capdesk.status import SaidAs


def test_every_setting_carries_the_measurement_that_set_it_or_says_it_was_not_swept():
    rows = DEFAULT.explained()
    assert len(rows) >= 40
    for name, _value, why in rows:
        assert why and (re.search(r"\d", why) or "not swept" in why), name
    assert {n.split(".")[0] for n, _, _ in rows} == {"seeing", "saying", "mending"}


def test_the_settings_are_frozen_and_a_study_changes_a_copy():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.saying.kind_fact = 0.5  # type: ignore[misc]
    tried = DEFAULT.with_values({"saying.kind_fact": 0.5, "mending.say_sex": True})
    assert (tried.saying.kind_fact, tried.mending.say_sex) == (0.5, True)
    assert (DEFAULT.saying.kind_fact, DEFAULT.mending.say_sex) == (0.9, False)
    assert tried.seeing == DEFAULT.seeing
    with pytest.raises(KeyError, match="saying.no_such"):
        DEFAULT.with_values({"saying.no_such": 1})


def test_what_is_said_follows_the_settings_it_is_given():
    drawing = dataclasses.replace(evidence("A dog."), kind="drawing", kind_probability=0.8)
    assert composer.alt_text(policy.decide(drawing)).text == "Probably a drawing."
    surer = DEFAULT.with_values({"saying.kind_fact": 0.75})
    assert composer.alt_text(policy.decide(drawing, settings=surer)).text == "A drawing."

    man = evidence("A man is sitting on a bench.", trust=0.95, detections=[("person", 0.97)],
                   concepts={"bench": 0.9})
    assert "person" in policy.decide(man).caption
    assert "man" in policy.decide(man, settings=DEFAULT.with_values({"mending.say_sex": True})).caption


def test_a_manifest_section_overrides_the_defaults_and_anything_else_there_is_refused(tmp_path):
    where = tmp_path / "manifest.json"
    assert PolicySettings.for_model(None, where) is DEFAULT
    s = PolicySettings.for_model({"seeing": {"person_seen": 0.6}, "saying": {"max_said": 2}}, where)
    assert (s.seeing.person_seen, s.saying.max_said, s.mending) == (0.6, 2, DEFAULT.mending)
    for bad, said in (([], "policy must be an object"), ({"hearing": {}}, "policy.hearing is not one of"),
                      ({"seeing": {"person_seen": "high"}}, "policy.seeing.person_seen must be a number from 0 to 1"),
                      ({"seeing": {"person_seen": 1.5}}, "from 0 to 1, not '1.5'"),
                      ({"seeing": {"person_seen": float("nan")}}, "not 'nan'"),
                      ({"saying": {"max_said": True}}, "max_said must be a whole number"),
                      ({"mending": {"say_sex": 1}}, "say_sex must be true or false"),
                      ({"mending": {"colour": 0.2}}, "policy.mending.colour is not a setting")):
        with pytest.raises(BundleError) as err:
            PolicySettings.for_model(bad, where)
        assert str(err.value).startswith(f"{where}: ") and said in str(err.value)


def _bundle_with_policy(tmp_path, default_bundle, section) -> str:
    dst = tmp_path / "models" / "everyday-own-policy"
    shutil.copytree(default_bundle, dst)
    manifest = json.loads((dst / "manifest.json").read_text(encoding="utf-8"))
    manifest["policy"] = section
    (dst / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return str(dst)


def test_a_model_is_described_by_its_own_settings(tmp_path, default_bundle):
    """The real model: the astronaut's caption (trust 0.99) is "Probably ..." by the shipped settings, and
    withheld by a bundle that withholds every caption under trust 1."""
    picture = str(SAMPLES / "astronaut.png")
    shipped = run_cli("caption", "--json", "--model", str(default_bundle), picture)
    assert shipped.returncode == 0, shipped.stderr
    assert json.loads(shipped.stdout)["said_as"] == str(SaidAs.PROBABLY)
    own = _bundle_with_policy(tmp_path, default_bundle, {"saying": {"trust_probably": 1.0}})
    r = run_cli("caption", "--json", "--model", own, picture)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["said_as"] == str(SaidAs.WITHHELD) and "trust 0.99" in rec["reason"]


def test_a_model_whose_policy_section_is_broken_is_refused_naming_its_manifest_and_the_key(tmp_path, default_bundle):
    own = _bundle_with_policy(tmp_path, default_bundle, {"seeing": {"person_seen": "high"}})
    r = run_cli("caption", "--model", own, str(SAMPLES / "astronaut.png"))
    assert r.returncode != 0 and not r.stdout
    assert f"{own}/manifest.json: policy.seeing.person_seen must be a number from 0 to 1" in r.stderr
