"""Device drivers: a pure codec and a thin transport each, so wire formats are testable without hardware."""
