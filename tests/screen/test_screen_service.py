"""``capdesk service`` on a real X display (Xvfb) with a real accessibility bus: a real service process, in a
runtime folder of the test's own, answers ``capdesk screen`` exactly as the command answers alone (output,
exit status, saved files), reachable only by its own user, one per user; it hands ``--speak`` to
speech-dispatcher (a stand-in that keeps what it was told) and answers a grabbed key (xdotool) as
``capdesk screen --focus --speak``. No timings here: those are bench/bench_screen.py's."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT
from screen_harness import START_TIMEOUT_S, Window, _env, _read_line, _stop, display, session_bus  # noqa: F401

from capdesk.screen import client
from capdesk.screen.atspi import AtspiError, focus_target

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("Xvfb") is None,
                                reason="needs Linux and Xvfb (Debian package xvfb)")]

NOBODY = 65534
HEAVY = ("numpy", "onnxruntime", "PIL", "PySide6", "rapidocr_onnxruntime", "argparse")


class FakeSpeechd:
    """Answers SSIP as speech-dispatcher does and keeps each text it is given, and each command line. With
    ``hold``, a text is spoken until its client cancels it (as a long description is)."""

    def __init__(self, path: Path, hold: bool = False) -> None:
        self.hold = hold
        self.texts: list[str] = []
        self.cancelled_at: list[int] = []
        self.commands: list[str] = []
        self._cond = threading.Condition()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        body: list[str] | None = None
        with conn, conn.makefile("rb") as f:
            for raw in f:
                line = raw.decode().rstrip("\r\n")
                if body is not None:
                    if line != ".":
                        body.append(line)
                        continue
                    with self._cond:
                        self.texts.append("\n".join(body))
                        self._cond.notify_all()
                    body = None
                    conn.sendall(b"225-1\r\n225 OK MESSAGE QUEUED\r\n" if self.hold else
                                 b"225-1\r\n225 OK MESSAGE QUEUED\r\n702-1\r\n702-1\r\n702 END\r\n")
                    continue
                with self._cond:
                    self.commands.append(line)
                    self._cond.notify_all()
                if line == "CANCEL self":
                    self.cancelled_at.append(len(self.texts))  # how many texts had come when it came
                    conn.sendall(b"200 OK\r\n703-1\r\n703-1\r\n703 CANCELED\r\n")
                elif line == "SPEAK":
                    body = []
                    conn.sendall(b"230 OK RECEIVING DATA\r\n")
                elif line == "QUIT":
                    break
                else:
                    conn.sendall(b"200 OK\r\n")

    def wait_for(self, count: int, timeout: float = START_TIMEOUT_S) -> list[str]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.texts) >= count, timeout), \
                f"speech-dispatcher was told {len(self.texts)} texts, not {count}"
            return list(self.texts)

    def wait_for_command(self, command: str, timeout: float = START_TIMEOUT_S) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: command in self.commands, timeout), self.commands

    def close(self) -> None:
        self.server.close()


class Service:
    """``capdesk service`` running in ``env``; ready once it answers a ping."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.env = env
        self.proc = subprocess.Popen([sys.executable, "-m", "capdesk", "service", *args], env=env, cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 2 * START_TIMEOUT_S  # the model and the text reader load first
        while self.ping() is None:
            assert self.proc.poll() is None, f"the service ended: {self.proc.communicate()[1]}"
            assert time.monotonic() < deadline, "the service did not answer"
            time.sleep(0.1)

    def ping(self) -> dict | None:
        return client.ask({"op": "ping"}, self.env, timeout=5)

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            client.ask({"op": "stop"}, self.env, timeout=10)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                _stop(self.proc)
        return self.proc.returncode, self.proc.stderr.read()


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("run")
    d.chmod(0o700)
    return d


@pytest.fixture(scope="module")
def speechd(runtime):
    fake = FakeSpeechd(runtime / "speechd.sock")
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def service_env(display, session_bus, runtime, speechd, tmp_path_factory):  # noqa: F811
    settings = tmp_path_factory.mktemp("settings") / "settings.json"
    state = tmp_path_factory.mktemp("state")  # the ledger of sidecars written: the test's own
    return _env(display, session_bus, XDG_RUNTIME_DIR=str(runtime), CAPDESK_SETTINGS=str(settings),
                XDG_STATE_HOME=str(state),
                SPEECHD_ADDRESS=f"unix_socket:{runtime}/speechd.sock")


@pytest.fixture(scope="module")
def service(service_env):
    s = Service(service_env, "--key", "<Super>d")
    yield s
    status, err = s.stop()
    assert status == 0 and err == "", err  # nothing is said about the requests by default
    assert not (Path(client.folder(service_env)) / client.SOCKET).exists()


@pytest.fixture(scope="module")
def window(service_env):
    w = Window(service_env, "button")
    # The window registers with the accessibility bus on its own time: wait until it says where the focus is.
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            if focus_target(service_env, timeout=5).role == "push button":
                break
        except AtspiError as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"the window never told the accessibility bus its focus: {exc}") from None
        time.sleep(0.1)
    yield w
    w.close()


def run(*args: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "capdesk", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def alone(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The same session with no service to ask (a runtime folder of its own)."""
    folder = tmp_path / "alone-run"
    folder.mkdir(mode=0o700, exist_ok=True)
    return dict(env, XDG_RUNTIME_DIR=str(folder))


@pytest.mark.slow  # 15 s measured on two busy cores
def test_the_service_answers_as_the_command_alone(service, window, tmp_path):
    x, y, w, h = window.focus
    region = f"{x},{y},{w},{h}"
    # The client's own process loads none of what describing needs: the service did the work.
    script = ("import contextlib, io, json, sys\nfrom capdesk.cli import main\nout = io.StringIO()\n"
              "with contextlib.redirect_stdout(out):\n    status = main(sys.argv[1:])\n"
              f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
              "print(json.dumps({'status': status, 'out': out.getvalue(), 'heavy': heavy}))\n")
    got = json.loads(subprocess.run([sys.executable, "-c", script, "screen", "--region", region, "--json"],
                                    env=service.env, capture_output=True, text=True, timeout=300, cwd=ROOT).stdout)
    assert got["status"] == 0 and got["heavy"] == [], got
    by_service = run("screen", "--region", region, "--json", env=service.env)
    by_itself = run("screen", "--region", region, "--json", env=alone(service.env, tmp_path))
    assert by_service.returncode == by_itself.returncode == 0
    assert json.loads(by_service.stdout) == json.loads(by_itself.stdout) == json.loads(got["out"])
    assert by_service.stdout == by_itself.stdout and by_service.stderr == by_itself.stderr
    rec = json.loads(by_service.stdout)
    assert rec["captured"]["rect"] == dict(zip(("x", "y", "width", "height"), window.focus))
    plain = run("screen", "--region", region, env=service.env)
    assert plain.stdout.strip() == rec["description"]


@pytest.mark.slow  # 3 s measured on two busy cores
def test_plain_output_and_review_line_are_the_same(service, window, tmp_path):
    x, y, w, h = window.focus
    args = ("screen", "--region", f"{x},{y},{w},{h}")
    by_service, by_itself = run(*args, env=service.env), run(*args, env=alone(service.env, tmp_path))
    assert (by_service.returncode, by_service.stdout, by_service.stderr) == \
        (by_itself.returncode, by_itself.stdout, by_itself.stderr)


@pytest.mark.slow  # 3 s measured on two busy cores
def test_focus_is_asked_of_the_clients_accessibility_bus(service, window, tmp_path):
    by_service = run("screen", "--focus", "--json", env=service.env)
    by_itself = run("screen", "--focus", "--json", env=alone(service.env, tmp_path))
    assert (by_service.returncode, by_service.stdout, by_service.stderr) == \
        (by_itself.returncode, by_itself.stdout, by_itself.stderr)
    cap = json.loads(by_service.stdout)["captured"]
    assert cap["role"] == "push button" and cap["name"] == "Photo of the day"


@pytest.mark.slow  # 3 s measured on two busy cores
def test_save_writes_where_the_client_is(service, window, tmp_path):
    x, y, w, h = window.focus
    recs = {}
    for who, env in (("service", service.env), ("alone", alone(service.env, tmp_path))):
        here = tmp_path / who
        here.mkdir()
        proc = run("screen", "--region", f"{x},{y},{w},{h}", "--json", "--save", "kept", env=env, cwd=here)
        assert proc.returncode == 0, proc.stderr
        rec = json.loads(proc.stdout)
        saved = rec["captured"]["saved"]
        assert saved.startswith("kept/screen-") and (here / saved).is_file()  # relative to the client's folder
        assert sorted(p.name for p in (here / "kept").iterdir()) == sorted(
            [Path(saved).name, Path(saved).with_suffix(".txt").name, Path(saved).name + ".xmp"])
        recs[who] = rec
    for rec in recs.values():
        for k in ("saved", "sidecars"):
            rec["captured"].pop(k)
        rec.pop("path")
    assert recs["service"] == recs["alone"]


@pytest.mark.slow  # 9 s measured on two busy cores
def test_failures_say_the_same_and_exit_the_same(service, tmp_path):
    cases = [("screen", "--region", "5000,5000,10,10"),  # off screen: exit 1
             ("screen", "--region", "nonsense"),  # usage: exit 2
             ("screen", "--window", "--region", "1,1,5,5")]  # two targets: exit 2
    for args in cases:
        by_service, by_itself = run(*args, env=service.env), run(*args, env=alone(service.env, tmp_path))
        assert (by_service.returncode, by_service.stdout, by_service.stderr) == \
            (by_itself.returncode, by_itself.stdout, by_itself.stderr), args
        assert by_service.returncode in (1, 2) and by_service.stdout == ""
        assert by_service.stderr.splitlines()[-1].startswith(("capdesk: error: ", "capdesk screen: error: "))
    wayland = dict(service.env, WAYLAND_DISPLAY="wayland-0")
    by_service, by_itself = run("screen", "--focus", env=wayland), run("screen", "--focus",
                                                                         env=alone(wayland, tmp_path))
    assert by_service.returncode == by_itself.returncode == 1 and by_service.stderr == by_itself.stderr
    assert "Wayland" in by_service.stderr


def test_the_folder_and_socket_are_the_users_alone(service):
    folder = Path(client.folder(service.env))
    sock = folder / client.SOCKET
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.getuid()
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600


def _as_nobody(path: Path) -> str:
    """Connect to ``path`` as user nobody (a forked child that drops root) and ask for a ping; what happened."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(20)
            try:
                s.connect(str(path))
                s.sendall(json.dumps({"op": "ping", "v": 1}).encode() + b"\n")
                s.shutdown(socket.SHUT_WR)
                data = s.recv(65536)
                said = "answered: " + data.decode() if data else "closed unanswered"
            except (BrokenPipeError, ConnectionResetError):
                said = "closed unanswered"  # closed before the request was even read
            except PermissionError:
                said = "permission denied"
            except OSError as exc:
                said = f"error: {exc}"
            os.write(w, said.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    return said


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to connect as another user")
def test_another_user_is_refused(service):
    folder = Path(client.folder(service.env))
    sock = folder / client.SOCKET
    # The folder's modes keep others out ...
    assert _as_nobody(sock) == "permission denied"
    # ... and where they were loosened (a link to the socket in an open folder), the service itself asks
    # who connects and closes unread.
    open_folder = Path(tempfile.mkdtemp(prefix="capdesk-open-"))
    try:
        open_folder.chmod(0o755)
        os.link(sock, open_folder / "service.sock")
        sock.chmod(0o666)
        assert _as_nobody(open_folder / "service.sock") == "closed unanswered"
    finally:
        sock.chmod(0o600)
        shutil.rmtree(open_folder)
    assert service.ping() is not None  # and goes on answering its user


@pytest.mark.slow  # 2 s measured on two busy cores
def test_a_second_service_refuses_to_start(service):
    second = run("service", env=service.env)
    assert second.returncode == 1 and second.stdout == ""
    assert second.stderr.count("\n") == 1 and "already running" in second.stderr
    assert f"pid {service.proc.pid}" in second.stderr
    status = run("service", "--status", env=service.env)
    assert status.returncode == 0 and f"pid {service.proc.pid}" in status.stdout and "<Super>d" in status.stdout


def test_a_bad_key_is_refused_in_one_line(service_env, tmp_path):
    proc = run("service", "--key", "<Super", env=alone(service_env, tmp_path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "<Super" in proc.stderr
    proc = run("service", "--key", "<Super>nokey", env=alone(service_env, tmp_path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "'nokey'" in proc.stderr


@pytest.mark.slow  # 15 s measured on two busy cores
def test_a_key_another_program_holds_is_said_in_one_line(service, tmp_path):
    # A service of another session (its own runtime folder) on the same display: the module's holds <Super>d.
    proc = run("service", "--key", "<Super>d", env=alone(service.env, tmp_path))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "taken by another program" in proc.stderr
    assert service.ping()["key"] == "<Super>d"  # the first one keeps it


def test_speak_is_handed_to_speech_dispatcher_by_the_service(service, window, speechd):
    x, y, w, h = window.focus
    before = len(speechd.texts)
    proc = run("screen", "--region", f"{x},{y},{w},{h}", "--speak", env=service.env)
    assert proc.returncode == 0 and proc.stdout.strip(), proc.stderr
    said = speechd.wait_for(before + 1)[before]
    assert said == proc.stdout.strip()
    assert "SET self CLIENT_NAME user:capdesk:screen" in speechd.commands
    assert "SET self PRIORITY message" in speechd.commands


def test_a_new_press_stops_what_the_service_still_says(service, window, tmp_path):
    long_speech = FakeSpeechd(tmp_path / "holding.sock", hold=True)  # the client's SPEECHD_ADDRESS is used
    env = dict(service.env, SPEECHD_ADDRESS=f"unix_socket:{tmp_path / 'holding.sock'}")
    x, y, w, h = window.focus
    try:
        first = run("screen", "--region", f"{x},{y},{w},{h}", "--speak", env=env)
        assert first.returncode == 0 and long_speech.wait_for(1) == [first.stdout.strip()]  # ended, still saying it
        assert "CANCEL self" not in long_speech.commands
        second = run("screen", "--region", f"{x},{y},{w},{h}", "--speak", env=env)
        assert second.returncode == 0
        long_speech.wait_for_command("CANCEL self")
        assert long_speech.wait_for(2)[1] == second.stdout.strip()
        assert long_speech.cancelled_at == [1]  # the first stopped before the second was said
    finally:
        long_speech.close()


@pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool (Debian package xdotool)")
@pytest.mark.slow  # 4 s measured on two busy cores
def test_the_grabbed_key_describes_the_focus_aloud(service, window, speechd, tmp_path):
    expected = run("screen", "--focus", env=alone(service.env, tmp_path))
    assert expected.returncode == 0, expected.stderr
    before = len(speechd.texts)
    subprocess.run(["xdotool", "key", "super+d"], env=service.env, check=True, timeout=30)
    said = speechd.wait_for(before + 1)[before]
    assert said == expected.stdout.strip()
    # Num Lock on: the key still works.
    subprocess.run(["xdotool", "key", "Num_Lock", "super+d", "Num_Lock"], env=service.env, check=True, timeout=30)
    assert speechd.wait_for(before + 2)[before + 1] == said


@pytest.mark.slow  # 9 s measured on two busy cores
def test_the_key_follows_the_settings(service_env, tmp_path):
    from capdesk.session.settings import Settings

    if not hasattr(Settings(), "screen_shortcut"):
        pytest.skip("the settings have no screen_shortcut field yet")
    env = dict(alone(service_env, tmp_path), CAPDESK_SETTINGS=str(tmp_path / "settings.json"))
    Path(env["CAPDESK_SETTINGS"]).write_text(json.dumps({"screen_shortcut": "<Super>F9"}), encoding="utf-8")
    s = Service(env)
    try:
        assert s.ping()["key"] == "<Super>F9"
        Path(env["CAPDESK_SETTINGS"]).write_text(json.dumps({"screen_shortcut": "<Control><Alt>F10"}),
                                                 encoding="utf-8")
        deadline = time.monotonic() + START_TIMEOUT_S
        while s.ping()["key"] != "<Control><Alt>F10":
            assert time.monotonic() < deadline, "the new key was not grabbed"
            time.sleep(0.1)
    finally:
        assert s.stop()[0] == 0


@pytest.mark.slow  # 16 s measured on two busy cores
def test_a_killed_service_leaves_nothing_in_the_way(service_env, tmp_path):
    env = alone(service_env, tmp_path)
    s = Service(env)
    s.proc.kill()  # no chance to clean up: its socket file stays
    s.proc.wait(30)
    sock = Path(client.folder(env)) / client.SOCKET
    assert sock.exists()
    proc = run("screen", "--region", "0,0,40,30", env=env)  # done by the command itself
    assert proc.returncode == 0 and proc.stdout.strip()
    assert run("service", "--status", env=env).returncode == 1
    again = Service(env)  # the lock died with the process: a new service starts
    try:
        assert again.ping()["pid"] == again.proc.pid
    finally:
        assert again.stop()[0] == 0
    assert not sock.exists()


def test_a_client_of_another_version_does_the_work_itself(service):
    request = {"op": "screen", "argv": ["screen", "--full"], "env": service.env, "cwd": str(ROOT), "umask": 0o022}
    reply = client.ask(dict(request, version="0.0.0-other"), service.env, timeout=60)
    assert reply is not None and "decline" in reply and "status" not in reply
