"""Cross-component tests: kilnd + its local agents + the Python client over
real loopback gRPC. See tests/e2e/conftest.py for the daemon fixtures."""
