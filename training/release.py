"""From a finished training run to a shippable bundle: export, tune decoding on val,
measure on test, draw the attention sheet, record it all in the manifest, write the card.

    capdesk train release RUN DATA --name NAME --out models/NAME [--info card.json]
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from training.evaluate import evaluate_bundle, tune_decoding
from training.export import export_run, write_manifest


def release(run: Path, data: Path, name: str, out: Path, info: dict | None = None,
            image_root: Path | None = None, beams: tuple[int, ...] = (1, 3, 5), meteor: bool = True,
            tune: bool = True) -> dict:
    export_run(run, out, name, dict(info or {}))
    return measure(out, data, image_root, beams, meteor, tune)


def measure(out: Path, data: Path, image_root: Path | None = None, beams: tuple[int, ...] = (1, 3, 5),
            meteor: bool = True, tune: bool = True) -> dict:
    """Tune decoding on val, then test figures and the attention sheet, into an existing bundle."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    name = manifest["name"]
    if tune:
        tuning = tune_decoding(out, data, beam=3, image_root=image_root)
        manifest["decoding"].update(tuning["chosen"])
        manifest.setdefault("training", {})["decoding_tuned_on_val"] = tuning
        write_manifest(out, manifest)
    sheet = out.parent / f"{name}-attention.png"
    res = evaluate_bundle(out, data, "test", list(beams), sheet=sheet, meteor=meteor,
                          decoding=manifest["decoding"], image_root=image_root)
    shutil.move(str(sheet), out / "attention-sheet.png")
    res.pop("sheet", None)
    # Which weights the figures are of: a shrunk bundle is measured as it is stored.
    res["weights"] = manifest.get("weights", {}).get("kind", "float32")
    manifest["metrics"] = {"test": res}
    write_manifest(out, manifest)
    return manifest


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="capdesk train release", description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("data")
    ap.add_argument("--name", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--info", help="JSON file of manifest fields: description, domain, licence, data ...")
    ap.add_argument("--image-root", help="where the data set's images are, when not beside the data file")
    ap.add_argument("--no-tune", action="store_true")
    ap.add_argument("--measure-only", action="store_true", help="the bundle exists: only tune and measure it")
    ns = ap.parse_args(argv)
    info = json.loads(Path(ns.info).read_text()) if ns.info else {}
    root = Path(ns.image_root) if ns.image_root else None
    if ns.measure_only:
        m = measure(Path(ns.out), Path(ns.data), root, tune=not ns.no_tune)
    else:
        m = release(Path(ns.run), Path(ns.data), ns.name, Path(ns.out), info, root, tune=not ns.no_tune)
    print(json.dumps({"decoding": m["decoding"], "metrics": m["metrics"]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
