"""Memory: peak resident memory (RSS) of ``capdesk caption`` on 100 photos, whether memory grows
over a 1,000-photo batch (RSS sampled every 100 photos), and the window's RSS after captioning a
folder of 100 photos.

Each measure runs in a fresh child process that reads its own ``VmHWM`` (peak RSS) and ``VmRSS``
from /proc when it ends: a child's ``ru_maxrss`` can carry its parent's peak, /proc cannot. Photos
come from the everyday data set (``../shared/data/everyday/images``); without it the bench says so
and stops. Linux only (/proc).

    python bench/bench_memory.py [--photos 100] [--batch 1000] [--model NAME] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("CAPDESK_SHARED_DATA", ROOT.parent / "shared" / "data")) / "everyday" / "images"

# Runs ``capdesk caption`` in this process and, as it exits, writes its peak and current RSS.
CLI_CHILD = """
import atexit, json, sys
def _report(out=sys.argv[1]):
    st = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)
    kb = lambda k: int(st[k].split()[0])
    open(out, 'w').write(json.dumps({'peak_rss_mb': round(kb('VmHWM') / 1024, 1),
                                     'end_rss_mb': round(kb('VmRSS') / 1024, 1)}))
atexit.register(_report)
from capdesk.cli.main import main
code = main(['caption', *sys.argv[2:]])
sys.exit(code)
"""

# Describes N photos through the describer (what ``capdesk caption`` and batch use), RSS every 100.
BATCH_CHILD = """
import json, sys
from capdesk.describe.describer import Describer
from capdesk.folders.reading import describe_paths
def rss():
    st = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)
    return round(int(st['VmRSS'].split()[0]) / 1024, 1), round(int(st['VmHWM'].split()[0]) / 1024, 1)
paths, model, every = json.load(open(sys.argv[1])), sys.argv[2] or None, int(sys.argv[3])
d = Describer(model, provider='cpu')
samples, done, failed = [], 0, 0
for r in describe_paths(d, paths, batch_size=8):
    done += 1
    failed += r.error is not None
    if done % every == 0:
        now, peak = rss()
        samples.append({'photos': done, 'rss_mb': now, 'peak_rss_mb': peak})
print(json.dumps({'samples': samples, 'failed': failed}))
"""


# Opens a folder in the real window and runs the batch dialog over it; RSS when all is done.
GUI_CHILD = """
import json, sys
from pathlib import Path
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication
from capdesk.gui.dialogs import BatchDialog
from capdesk.gui.main_window import MainWindow
from capdesk.session.settings import Settings
def rss():
    st = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)
    kb = lambda k: round(int(st[k].split()[0]) / 1024, 1)
    return {'rss_mb': kb('VmRSS'), 'peak_rss_mb': kb('VmHWM')}
folder, out, model, limit_s = Path(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
app = QApplication(['capdesk'])
win = MainWindow(Settings(speech='off', model=model))
win.show()
app.processEvents()
report = {'window_shown': rss(), 'settings': {'model': model or 'automatic', 'ocr': win.settings.ocr}}
loop = QEventLoop()
guard = QTimer(singleShot=True, interval=int(limit_s * 1000))
guard.timeout.connect(lambda: (report.update(timed_out=True), loop.quit()))
guard.start()
win.open_path(folder)
dlg = BatchDialog(win, str(folder))
dlg.show()
dlg.start()
job = dlg.job
if job is None or not job.running:
    sys.exit('the batch did not start: ' + dlg.status.text())
# The end is delivered through this thread's event loop, which has not run yet: none is missed.
said = job.on_finished
job.on_finished = lambda result, text: (said(result, text), loop.quit())
loop.exec()
# Opening the folder captioned its first picture; that may still be under way.
if win.session._busy and not report.get('timed_out'):
    win.session.busy_changed.connect(lambda busy: busy or loop.quit())
    loop.exec()
report['after_batch'] = rss()
res = dlg.result
report.update(listed=win.list.count(), outcome=dlg.status.text(), models=sorted(win.session.describer().engines),
              counts=res.counts() if res is not None else None, photos=len(res.rows) if res is not None else 0)
Path(out).write_text(json.dumps(report))
dlg.close()
win.close()
"""


def photos(n: int) -> list[str]:
    files = sorted(p for p in DATA.iterdir() if p.suffix.lower() in (".avif", ".jpg", ".jpeg", ".png"))
    return [str(files[i % len(files)]) for i in range(n)] if files else []


def child_env() -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def cli_peak(paths: list[str], model: str | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rss.json"
        args = [sys.executable, "-c", CLI_CHILD, str(out), *paths] + (["--model", model] if model else [])
        run = subprocess.run(args, env=child_env(), capture_output=True, text=True)
        res = json.loads(out.read_text()) if out.exists() else {"error": run.stderr[-500:]}
    res.update(photos=len(paths), exit_code=run.returncode,
               captions=sum(1 for line in run.stdout.splitlines() if line.strip()))
    return res


def batch_growth(paths: list[str], model: str | None, every: int = 100) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        lst = Path(tmp) / "paths.json"
        lst.write_text(json.dumps(paths))
        run = subprocess.run([sys.executable, "-c", BATCH_CHILD, str(lst), model or "", str(every)],
                             env=child_env(), capture_output=True, text=True)
    if run.returncode:
        return {"error": run.stderr[-500:]}
    res = json.loads(run.stdout.strip().splitlines()[-1])
    s = res["samples"]
    # Growth is judged after the first sample: the first batches fill ONNX Runtime's arenas and caches.
    if len(s) >= 3:
        res["growth_mb_after_first_100"] = round(s[-1]["rss_mb"] - s[0]["rss_mb"], 1)
        res["growth_mb_second_half"] = round(s[-1]["rss_mb"] - s[len(s) // 2 - 1]["rss_mb"], 1)
    res["photos"] = len(paths)
    return res


def gui_after_folder(n: int, model: str | None, limit_s: float = 1800) -> dict:
    """The window's RSS and peak after captioning a folder of ``n`` photos through its batch export
    dialog. The folder holds copies (the batch writes sidecars beside them), in JPEG where the
    original is of a kind the window's folder listing skips."""
    try:
        import PySide6  # noqa: F401
    except ImportError:
        return {"skipped": "PySide6 is not installed"}
    from capdesk.imageio import is_image_path, load_image

    files = sorted(p for p in DATA.iterdir() if p.suffix.lower() in (".avif", ".jpg", ".jpeg", ".png"))[:n]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "photos"
        folder.mkdir()
        for f in files:
            if is_image_path(f):
                shutil.copy(f, folder / f.name)
            else:  # a folder lists only the kinds of file it knows (AVIF is not among them): JPEG copies
                load_image(f).save(folder / f"{f.stem}.jpg", quality=92)
        out = Path(tmp) / "rss.json"
        env = dict(child_env(), CAPDESK_SETTINGS=str(Path(tmp) / "settings.json"),
                   XDG_STATE_HOME=str(Path(tmp) / "state"))
        run = subprocess.run([sys.executable, "-c", GUI_CHILD, str(folder), str(out), model or "", str(limit_s)],
                             env=env, capture_output=True, text=True)
        res = json.loads(out.read_text()) if out.exists() else {"error": run.stderr[-500:]}
    res.update(exit_code=run.returncode, folder_photos=len(files))
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--photos", type=int, default=100, help="photos for capdesk caption (0: skip it)")
    ap.add_argument("--batch", type=int, default=1000, help="photos in the growth run (0: skip it)")
    ap.add_argument("--gui-photos", type=int, default=100, help="photos in the window's folder (0: skip it)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args()
    if not DATA.is_dir() or not photos(1):
        print(f"no photos at {DATA}: the memory bench needs the everyday data set")
        return 0
    info: dict = {"model": ns.model or "default", "photos_from": str(DATA)}
    if ns.photos:
        info["caption_1_photo"] = cli_peak(photos(1), ns.model)
        info[f"caption_{ns.photos}_photos"] = cli_peak(photos(ns.photos), ns.model)
        print(json.dumps({k: v for k, v in info.items() if k.startswith("caption")}))
    if ns.batch:
        info[f"batch_{ns.batch}_photos"] = batch_growth(photos(ns.batch), ns.model)
        print(json.dumps(info[f"batch_{ns.batch}_photos"]))
    if ns.gui_photos:
        info[f"gui_folder_{ns.gui_photos}_photos"] = gui_after_folder(ns.gui_photos, ns.model)
        print(json.dumps(info[f"gui_folder_{ns.gui_photos}_photos"]))
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
