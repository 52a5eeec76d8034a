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

# The differential program fuzzer against JAX, as long as asked (seed: where to start).
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= 0
fuzz: $(STAMP)
	$(PY) tests/fuzz.py --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)

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
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/fft.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/scaling.py

# The array API standard's conformance suite (data-apis/array-api-tests, its array-api
# submodule checked out) on ember.numpy and on jax.numpy, with the settings of JAX's own CI
# for it (x64 on, 5 examples a test, derandomized, no deadline: it checks values, and first
# compiles are #14's concern), no skips file for either. Not part of `make test`: CI has no
# copy of the suite.
#   make array-api ARRAY_API_TESTS=/path/to/array-api-tests
ARRAY_API_TESTS ?= ../array-api-tests
ARRAY_API_EXAMPLES ?= 5
array-api: $(STAMP)
	$(PY) -m pip install -q 'hypothesis>=6.151' ndindex pytest-json-report
	for ns in ember.numpy jax.numpy; do \
	  (cd $(ARRAY_API_TESTS) && ARRAY_API_TESTS_MODULE=$$ns ARRAY_API_TESTS_VERSION=2024.12 \
	   EMBER_ENABLE_X64=1 JAX_ENABLE_X64=1 $(abspath $(PY)) -m pytest array_api_tests \
	   -n 2 -p no:cacheprovider --max-examples=$(ARRAY_API_EXAMPLES) --derandomize \
	   --disable-deadline --disable-warnings -q \
	   2>&1 | tail -n 1 | sed "s/^/$$ns: /"); \
	done

irdl: $(STAMP)
	$(PY) -m ember.dialect.irdl > dialect/ember.irdl.mlir

# The host half of the GPU check: CUDA modules and the runtime-only wheels in gpu_bundle/;
# on the GPU machine: python3 gpu_bundle/gpu_check.py run gpu_bundle
gpu-bundle: $(STAMP)
	$(PY) -m ember.tools.gpu_check build gpu_bundle

.PHONY: venv demo test bench irdl gpu-bundle array-api fuzz
