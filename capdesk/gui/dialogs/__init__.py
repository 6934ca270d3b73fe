"""The window's dialogs: batch export, alt text in web pages, models, settings, teaching. Each draws a
Qt-free job or service and forwards the user's actions to it; what is said goes through the session."""

from .altfill import AltFillDialog
from .batch import BatchDialog
from .common import choose_from_list, show_keys
from .models import ModelsDialog
from .settings_dialog import SettingsDialog
from .teach import TeachDialog

__all__ = ["AltFillDialog", "BatchDialog", "ModelsDialog", "SettingsDialog", "TeachDialog", "choose_from_list",
           "show_keys"]
