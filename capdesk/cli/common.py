"""What the CLI's commands share: exit statuses, the parser class and the options several commands
take, opening the describer, the sidecar writer and the speaker from the parsed options (each problem
said as one ``capdesk: ...`` line on stderr), and lines said beside a progress bar.

(Kept apart from ``capdesk.cli.main`` so that the command modules need nothing from the module
that dispatches to them: no import circle. The services are imported when a command needs them,
so that ``capdesk --help`` and ``capdesk train`` start without loading numpy or Pillow.)
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from capdesk import limits
from capdesk.limits import DEFAULT_CONFIDENCE_THRESHOLD

if TYPE_CHECKING:
    from tqdm import tqdm

    from capdesk.describe.describer import DescribeOptions, Describer
    from capdesk.sidecars.writer import SidecarOptions, SidecarWriter
    from capdesk.speech import Speaker

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # as a shell reports a command stopped by Ctrl-C


class UsageParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 already; keep the message one line
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def error(message: str) -> None:
    print(f"capdesk: error: {message}", file=sys.stderr, flush=True)


def progress_bar(total: int | None = None) -> tqdm:
    """The pictures described so far, drawn on stderr."""
    from tqdm import tqdm

    return tqdm(total=total, unit="img", desc="alt text", file=sys.stderr, dynamic_ncols=True)


# What a terminal would act on (C0 and C1 controls, DEL; the name bytes 0x80-0x9F, kept by Python as lone
# surrogates, which an 8-bit terminal reads as C1 controls), and the tab and line breaks that would forge a
# field or a line of the tab-separated output.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\udc80-\udc9f]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def shown(text: object) -> str:
    """A file name or any text from outside (a picture's words, a model's manifest) safe to print as one
    field: its control characters shown escaped (\\x1b, \\n, \\t), never acted on by the terminal."""
    return _CONTROLS.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()) & 0xFF:02x}"), str(text))


def say_line(bar: tqdm | None, text: str, file: TextIO | None = None, flush: bool = False) -> None:
    """``text`` on ``file`` (default stderr): through the progress bar when one is drawn, which draws
    itself again below the line, else printed."""
    out = sys.stderr if file is None else file
    if bar is not None:
        bar.write(text, file=out)
    else:
        print(text, file=out, flush=flush)


def _number(value: str, convert: Callable[[str], float], in_range: Callable[[float], bool],
            expected: str) -> Any:
    """``convert(value)`` when it is a number ``in_range``; else argparse's error saying what was
    expected (argparse prefixes "argument --beam: "; a ValueError would read "invalid ... value")."""
    try:
        x = convert(value)
    except ValueError:
        x = None
    if x is None or not in_range(x):  # NaN is in no range
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")
    return x


def beam_type(value: str) -> int:
    return _number(value, int, lambda n: limits.BEAM_MIN <= n <= limits.BEAM_MAX,
                   f"a whole number from {limits.BEAM_MIN} to {limits.BEAM_MAX}")


def confidence_type(value: str) -> float:
    return _number(value, float, lambda x: limits.CONFIDENCE_MIN <= x <= limits.CONFIDENCE_MAX,
                   f"a number from {limits.CONFIDENCE_MIN:g} to {limits.CONFIDENCE_MAX:g}")


def positive_int(value: str) -> int:
    return _number(value, int, lambda n: n >= 1, "a whole number from 1 up")


def gpu_share(value: str) -> float:
    return _number(value, float, lambda x: 0 <= x <= 64, "a number of GPUs from 0 (e.g. 1 or 0.5)")


def describe_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what the description says")
    g.add_argument("--tags", choices=limits.TAGS_MODES, default="auto",
                   help="object tags in the description: auto = when the scene caption is withheld")
    g.add_argument("--ocr", choices=limits.OCR_MODES, default="auto",
                   help="read text in the picture: auto = where a quick look at the picture finds text; always; never")
    g.add_argument("--show-guess", action="store_true",
                   help="when a caption is withheld (picture unlike the model's), still say it, marked as a guess")


def sidecar_args(p: argparse.ArgumentParser) -> None:
    """Which sidecars are written, named how, and what they say."""
    from capdesk.sidecars import formats

    p.add_argument("--sidecar", default=",".join(formats.defaults()),
                   help=f"sidecar formats, comma-separated: {', '.join(formats.names())}")
    for fmt in (formats.get("xmp"), formats.get("txt")):  # the order --help has always listed them in
        p.add_argument(f"--{fmt.name}-name", choices=formats.NAMINGS, default=fmt.default_naming,
                       help=fmt.naming_help())
    p.add_argument("--lang", default="en", help="language of the alt text (XMP xml:lang)")
    p.add_argument("--ext-descr", action="store_true",
                   help="also write a longer description to the XMP sidecar (IPTC ExtDescrAccessibility): what "
                        "the model said, the object tags, the text read, the picture's size and main colours")
    p.add_argument("--mirror-dc", action="store_true", help="also write the alt text to dc:description")
    p.add_argument("--overwrite", action="store_true",
                   help="replace sidecars that CapDesk did not write or that were edited since")


def model_args(p: argparse.ArgumentParser, threshold: bool = False) -> None:
    """Which model describes, how (beam), where it runs, and (with ``threshold``) when it is unsure."""
    p.add_argument("--beam", type=beam_type, default=None, help="beam width (default: the model's)")
    p.add_argument("--model", default=None, help="installed model name, or a bundle folder or zip")
    p.add_argument("--provider", default=None, help="ONNX Runtime execution provider")
    if threshold:
        p.add_argument("--threshold", type=confidence_type, default=None,
                       help="the caption model's own confidence under which a caption is said as 'Probably ...' "
                            "and flagged for review. By default the trust score (fitted on val: how often a "
                            "caption names something not there) decides; a stricter threshold only takes facts "
                            f"away (default {DEFAULT_CONFIDENCE_THRESHOLD})")


def describe_options(ns: argparse.Namespace) -> DescribeOptions:
    from capdesk.describe.describer import DescribeOptions

    threshold = getattr(ns, "threshold", None)
    return DescribeOptions(tags=ns.tags, ocr=ns.ocr, show_guess=ns.show_guess,
                           text_upscale=getattr(ns, "text_upscale", None),
                           text_upright=getattr(ns, "text_upright", False),
                           low_confidence=DEFAULT_CONFIDENCE_THRESHOLD if threshold is None else threshold)


def open_engine(ns: argparse.Namespace, provider: str | None = None,
                opener: Callable[..., tuple[Describer, list[str]]] | None = None) -> Describer | None:
    """The describer the options ask for, on ``provider`` instead of ``--provider`` when given (warnings
    said on stderr), or None once the usage error is said. Its beam and options are given here, once.
    ``opener`` (default ``session.services.open_describer``) opens it: ``capdesk service`` keeps its own loaded."""
    from capdesk.session.services import SetupError, open_describer

    try:
        describer, warnings = (opener or open_describer)(ns.model, provider or ns.provider, ns.beam,
                                                         describe_options(ns))
    except SetupError as exc:
        error(str(exc))
        return None
    for w in warnings:
        print(f"capdesk: warning: {w}", file=sys.stderr)
    return describer


def sidecar_options(ns: argparse.Namespace, out_root: Path | None = None) -> SidecarOptions | None:
    """The sidecar options asked for; with ``out_root``, sidecars go to the mirror tree ``ns.out``."""
    from capdesk.sidecars.writer import SidecarOptions

    out_dir = Path(ns.out) if out_root is not None else None
    try:
        return SidecarOptions.parse(ns.sidecar, txt_name=ns.txt_name, xmp_name=ns.xmp_name, lang=ns.lang,
                                    ext_descr=ns.ext_descr, mirror_dc=ns.mirror_dc, overwrite=ns.overwrite,
                                    out_dir=out_dir, out_root=out_root)
    except ValueError as exc:
        error(str(exc))
        return None


def open_writer(opts: SidecarOptions) -> SidecarWriter | None:
    from capdesk.sidecars.writer import SidecarWriter

    writer = SidecarWriter(opts)
    if writer.ledger.error:  # one line, never a traceback: nothing is written without the ledger
        error(writer.ledger.error)
        return None
    return writer


def speaker_or_say(prefix: str) -> tuple[Speaker | None, str | None]:
    """A speaker, or None and why (said once on stderr after ``prefix``: 'error: cannot speak' ...)."""
    from capdesk.session.services import open_speaker

    speaker, why = open_speaker()
    if why:
        print(f"capdesk: {prefix}: {why}", file=sys.stderr)
    return speaker, why
