"""Test support: virtual-time event loops and the pytest plugin (fixtures for user suites)."""
