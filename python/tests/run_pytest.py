#!/usr/bin/env python3
"""ctest's entry to the pytest suite: exit 77 (skipped) when pytest, numpy, scipy or
scikit-learn cannot be imported, else pytest's exit status.

    PYTHONPATH=build/python PEGASOS_BINARY=build/pegasos python3 python/tests/run_pytest.py python/tests
"""
import sys

try:
    import numpy  # noqa: F401
    import pytest
    import scipy  # noqa: F401
    import sklearn  # noqa: F401
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider"] + sys.argv[1:]))
