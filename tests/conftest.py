"""Every test process computes on one thread: pytest-xdist runs a worker per core, and a worker whose torch or BLAS
spread over every core would oversubscribe them (the trainers the tests start take one thread already)."""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
