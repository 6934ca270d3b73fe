"""A batch as ``capdesk batch`` runs it: the pictures described here or on Ray workers, Ctrl-C in two
stages, and the alt text embedded into the images afterwards when asked. What happens is told to a
``BatchEvents`` as it happens; nothing here prints. (The window's batch is ``jobs.BatchJob``.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from capdesk.folders.batch import BatchResult, Row, run_batch
from capdesk.session.stopping import ctrl_c_in_two_stages
from capdesk.sidecars.writer import SidecarError, SidecarWriter
from capdesk.status import RowStatus

if TYPE_CHECKING:
    from capdesk.describe.describer import Describer
    from capdesk.folders.ray_batch import RayPlan, RayRun

# Many Ray workers feed this one process: its disk waits overlap (a network file system's round trips
# above all) instead of queueing behind each other.
RAY_WRITERS = 4


@dataclass(frozen=True)
class BatchOptions:
    """What the batch does besides describing (how it describes is the describer's)."""

    inputs: tuple[str, ...]  # files and folders, and the pictures a list named
    recursive: bool = False
    embed: bool = False  # the alt text also written into each image (exiftool, from its XMP sidecar)
    ray: RayPlan | None = None  # None: described on this machine


class BatchEvents(Protocol):
    """Who hears of the batch as it runs (the command line prints each)."""

    def progress(self, done: int, total: int, row: Row) -> None:
        """A picture's row: described, skipped, kept or failed."""

    def blocked(self, folder: Path, why: str, row_error: str) -> None:
        """No sidecar can be written in ``folder``: told once, before its pictures fail with ``row_error``."""

    def stopping(self) -> None:
        """The first Ctrl-C: the batch stops after the current picture."""

    def embed_failed(self, exc: SidecarError) -> None:
        """A picture's alt text could not be embedded; its row is failed."""


class BatchRun:
    """``start`` (Ray joined or started, when asked), ``run``, and ``close`` (which ``run`` calls)."""

    def __init__(self, options: BatchOptions, describer: Describer, writer: SidecarWriter) -> None:
        self.options, self.describer, self.writer = options, describer, writer
        self.ray_run: RayRun | None = None
        self._stdout = sys.stdout

    def start(self) -> str | None:
        """Where the pictures will be described, in one line, when on Ray; None when here. Raises
        ``RaySetupError`` (nothing started is left running) when Ray cannot be used as planned."""
        if self.options.ray is None:
            return None
        from capdesk.folders.ray_batch import RayRun, RaySetupError

        self.ray_run = RayRun(self.describer, self.options.ray)
        # Ray prints its own notices (a worker that died and was restarted ...) on stdout. They go to
        # stderr, so that stdout stays one line per described picture, as scripts read it.
        self._stdout, sys.stdout = sys.stdout, sys.stderr
        try:
            return self.ray_run.start()
        except RaySetupError:
            sys.stdout = self._stdout
            self.ray_run = None
            raise

    def run(self, events: BatchEvents) -> BatchResult:
        """The batch (``folders.batch.run_batch``), then the embedding; Ray is stopped before embedding."""
        ray = self.ray_run
        try:
            with ctrl_c_in_two_stages(events.stopping) as cancel:
                # The threshold is in the describer's options: one rule flags new and skipped pictures alike.
                result = run_batch(self.options.inputs, self.describer, self.writer,
                                   recursive=self.options.recursive, progress=events.progress,
                                   cancelled=cancel.is_set, describe=ray.stream if ray is not None else None,
                                   writers=RAY_WRITERS if ray is not None else 1, on_blocked=events.blocked)
        finally:
            self.close()
        if self.options.embed:
            embed_alt_text(result, self.writer, events.embed_failed)
        return result

    def close(self) -> None:
        if self.ray_run is not None:
            self.ray_run.close()
            self.ray_run = None
            sys.stdout = self._stdout


def embed_alt_text(result: BatchResult, writer: SidecarWriter, failed: Callable[[SidecarError], None]) -> None:
    """Copy each described picture's XMP sidecar into the image (the original kept beside it); a
    picture that cannot take it becomes a failed row, told to ``failed``."""
    from capdesk.sidecars.writer import embed_in_image, image_signature

    for row in result.rows:
        if row.status != RowStatus.CAPTIONED:
            continue
        image = Path(row.path)
        xmp = writer.paths(image)["xmp"]
        before = image_signature(image)
        try:
            embed_in_image(image, xmp)
        except SidecarError as exc:
            row.status, row.error = RowStatus.FAILED, f"embedding: {exc}"
            failed(exc)
        else:
            # The picture changed only by taking in its own alt text: the next run skips it.
            writer.follow_embedding(image, before)
