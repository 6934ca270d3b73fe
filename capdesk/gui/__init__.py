"""The Qt desktop application: a thin shell that draws and forwards events to the services
the CLI uses (describer, sidecar writer, batch runner, watcher, speech)."""
