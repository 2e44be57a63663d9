#!/usr/bin/env python3
"""This example's run against posteriordb's reference: python3 check.py OUTPUT_DIR (see ../reference_check.py)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from reference_check import main  # noqa: E402

main(here)
