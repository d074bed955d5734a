"""Device drivers: a pure codec and a thin transport per device, so the wire format is testable without hardware."""
