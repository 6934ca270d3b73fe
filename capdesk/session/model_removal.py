"""Taking a model out of the user's model folder, for the CLI (``capdesk models remove``) and the
window's Models dialog alike: settings that use the model fall back to Automatic, so that nothing
starts on a model that is gone. The alt text the model wrote is never touched."""

from __future__ import annotations

from dataclasses import dataclass

from capdesk.session.settings import Settings


@dataclass(frozen=True)
class Removal:
    message: str  # "removed model 'mine' (...)", as ``capdesk.model.install`` says it
    fell_back: bool  # the settings used the model and now choose one per picture (Automatic)


def remove_model(name: str, settings: Settings | None = None) -> Removal:
    """Remove model ``name`` (``BundleError`` when it cannot be: shipped, unknown ...); ``settings``
    (default: the saved ones) are saved with Automatic when they used it."""
    from capdesk.model.install import remove

    done = remove(name)
    if settings is None:
        settings, _ = Settings.load()
    fell_back = settings.model == name
    if fell_back:
        settings.model = ""
        settings.save()
    return Removal(done.message(), fell_back)
