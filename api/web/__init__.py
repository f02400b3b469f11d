"""Web pages served by the app, every asset inside the package (nothing from a CDN)."""
