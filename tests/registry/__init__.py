"""Kiln's op-level test registry: small named modules compiled through a real
kilnd for one target and compared with eager PyTorch (see docs/testing.md)."""
