"""The Qt desktop application: a thin shell that draws and forwards events to the services
the CLI uses (describer, sidecar writer, batch runner, watcher, speech).

May import: PySide6 (the only package that does), session/ and everything below it. Never cli/.
"""
