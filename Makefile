# Two entry points: `make demo` and `make test`. Both build the virtual environment first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lit -q tests/lit
	$(PY) -m pytest -n 2 tests

# OpenBLAS's core-type override slows NumPy on this machine: drop it for the peer, here only.
bench: $(STAMP)
	$(PY) -m pip install -q 'matplotlib>=3.8'
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/run.py
	$(PY) benchmarks/compile.py
	$(PY) benchmarks/passes.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/donation.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/grad.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/linalg.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/conv.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/scaling.py

irdl: $(STAMP)
	$(PY) -m ember.dialect.irdl > dialect/ember.irdl.mlir

# The host half of the GPU check: CUDA modules and the runtime-only wheels in gpu_bundle/;
# on the GPU machine: python3 gpu_bundle/gpu_check.py run gpu_bundle
gpu-bundle: $(STAMP)
	$(PY) -m ember.tools.gpu_check build gpu_bundle

.PHONY: venv demo test bench irdl gpu-bundle
