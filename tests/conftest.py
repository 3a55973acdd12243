import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hypothesis import HealthCheck, settings  # noqa: E402

# Property tests: a few hundred examples by default; `make test` runs tests/test_line_accounting.py
# again under "accounting" (10,000 examples), the bar for "no line is ever lost".
settings.register_profile("default", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("accounting", max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
