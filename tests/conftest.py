"""Fixtures several test modules share."""

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Run a module's tests with one thread (the book's setting); the session's count comes
    back afterwards. A module opts in with ``pytestmark = pytest.mark.usefixtures(...)``."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def pytest_configure(config):
    config.addinivalue_line("markers", "no_edition: a test of the exercises that runs once, "
                                       "not once per edition (tests/test_exercises.py)")
