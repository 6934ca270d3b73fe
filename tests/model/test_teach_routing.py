"""Routing and the user's fine-tunes: a fine-tune is handed pictures automatically only when it proved
itself, and only pictures inside its own gate; outside its gate it takes nothing from another model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES

from capdesk.folders.reading import describe_paths
from capdesk.model.bundle import user_models_dir
from capdesk.model.domain import automatic, fine_tuned, route


def test_a_fine_tune_outside_its_own_gate_neither_takes_nor_spoils_a_picture():
    # picture 0: both just outside their gates, the fine-tune a little less; picture 1: inside the
    # fine-tune's gate and fitting it better; picture 2: the base's own.
    ratios = {"everyday": np.array([1.1, 0.8, 0.9]), "mine": np.array([1.05, 0.5, 1.3])}
    plain = route(ratios, 3, "everyday")
    assert plain[0].model == "mine" and plain[0].in_domain is False  # what a gate of a few photos did before
    r = route(ratios, 3, "everyday", inside_only={"mine"})
    assert [x.model for x in r] == ["everyday", "mine", "everyday"]
    assert r[1].in_domain is True and r[2].in_domain is True
    # just outside the base's gate, the picture is the base's "near" one: the fine-tune does not spoil that
    assert r[0].in_domain is False and r[0].near is True
    # named by the user, the fine-tune still describes, and says when a picture is not its own
    named = route(ratios, 3, "mine", fixed=True, inside_only={"mine"})
    assert [x.model for x in named] == ["mine"] * 3 and named[0].in_domain is False


def test_which_manifests_routing_may_hand_pictures_to():
    assert automatic({"name": "everyday"}) and not fine_tuned({"name": "everyday"})
    old = {"name": "mine", "base_model": "everyday"}  # a fine-tune made before the proof existed
    assert fine_tuned(old) and not automatic(old)
    assert not automatic({**old, "finetune": {"proved": False, "automatic": False}})
    assert not automatic({**old, "finetune": {"proved": True, "automatic": False}})  # --install named
    assert automatic({**old, "finetune": {"proved": True, "automatic": True}})
    assert not automatic({**old, "finetune": "yes"})


def _install_copy(default_bundle: Path, name: str, finetune: dict | None) -> Path:
    """The shipped bundle under another name, marked as the user's fine-tune of it (its gate, hence
    its ratios, are the base's: it would tie with the base on every picture)."""
    dest = user_models_dir() / name
    shutil.copytree(default_bundle, dest)
    m = json.loads((dest / "manifest.json").read_text())
    m["name"], m["base_model"] = name, "everyday"
    if finetune is not None:
        m["finetune"] = finetune
    (dest / "manifest.json").write_text(json.dumps(m))
    return dest


@pytest.mark.parametrize("verdict,used", [(None, False), ({"proved": False, "automatic": False}, False),
                                          ({"proved": True, "automatic": False}, False),
                                          ({"proved": True, "automatic": True}, True)])
@pytest.mark.slow  # 3 s measured on two busy cores
def test_the_describer_routes_to_a_fine_tune_only_when_it_proved_itself(default_bundle, verdict, used):
    from capdesk.describe.describer import Describer

    _install_copy(default_bundle, "mine", verdict)
    d = Describer(None, provider="cpu")
    assert ("mine" in d.engines) is used
    named = Describer("mine", provider="cpu")  # named with --model, it is always used
    assert named.name == "mine"
    res = list(describe_paths(named, [SAMPLES / "chelsea.png"]))
    assert res[0].ok and res[0].model == "mine"
