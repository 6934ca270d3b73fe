"""How ``capdesk screen`` says what it saw: through speech-dispatcher (the screen reader's voice), else
in CapDesk's own voice; a newer key press (SIGTERM to this process) stops the description still
being said. ``capdesk service`` speaks for its clients in its own way (``screen_service``).
"""

from __future__ import annotations

import signal
import sys
from typing import Protocol

SPEECH_WAIT_S = 30.0  # plus a second for every 15 characters: espeak-ng's pace at its default rate


class Speech(Protocol):
    """Who says the outcome: this process (``capdesk screen``) or the service, which goes on speaking
    after the command's process has ended."""

    def stop(self, env: dict[str, str]) -> None:
        """Stop the description still being said: the key was pressed again."""

    def say(self, text: str, env: dict[str, str]) -> str | None:
        """Say ``text``; why it could not be said, or None."""


class SpeakHere:
    """``capdesk screen`` speaking for itself: through speech-dispatcher, else in CapDesk's own voice."""

    def stop(self, env: dict[str, str]) -> None:
        from capdesk.screen import speechd

        speechd.stop_previous(env)

    def say(self, text: str, env: dict[str, str]) -> str | None:
        return speak_here(text, env)


def speak_here(text: str, env: dict[str, str]) -> str | None:
    """Say ``text`` through speech-dispatcher, else in CapDesk's voice; why it could not be said, or None."""
    from capdesk.screen import speechd

    def stop(signum, frame) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)  # a newer key press stops this one
    mine = speechd.claim(env)
    try:
        try:
            conn = speechd.Dispatcher(env)
        except (speechd.SpeechdUnavailable, OSError) as exc:
            print(f"capdesk: {exc}; speaking in CapDesk's own voice", file=sys.stderr, flush=True)
            return _own_voice(text)
        try:
            msg = conn.say(text)
            conn.wait(msg, SPEECH_WAIT_S + len(text) / 15)
        except KeyboardInterrupt:
            conn.cancel()
        except (speechd.SpeechdUnavailable, OSError) as exc:
            return f"speech-dispatcher failed ({exc})"
        finally:
            conn.close()
    except KeyboardInterrupt:
        pass
    finally:
        speechd.release(mine)
        signal.signal(signal.SIGTERM, previous)
    return None


def _own_voice(text: str) -> str | None:
    from capdesk.session.services import open_speaker
    from capdesk.speech import Priority

    speaker, why = open_speaker()
    if speaker is None:
        return f"cannot speak: {why}"
    failed: list[str] = []
    speaker.on_error = failed.append
    try:
        speaker.say(text, Priority.NORMAL)
        speaker.wait_idle(SPEECH_WAIT_S + len(text) / 5)
    except KeyboardInterrupt:
        speaker.cancel()
    finally:
        speaker.close()
    return failed[0] if failed else None
