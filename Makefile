# edgeinfer — the two commands a user needs:
#   make run    set up, build Release, run the default model
#   make test   set up, build Release + sanitizer builds, run the whole ctest suite
EDGEINFER_DATA ?= $(abspath ../shared/data)
export EDGEINFER_DATA
JOBS ?= $(shell nproc)
RELEASE_DIR := build/release
ASAN_DIR := build/asan
MODEL ?= $(EDGEINFER_DATA)/models/stories260K.gguf
PROMPT ?= Once upon a time

.PHONY: run test setup build build-asan test-release test-asan clean

setup:
	@bash scripts/setup.sh

build: setup
	cmake -S . -B $(RELEASE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(RELEASE_DIR) -j $(JOBS)

build-asan: setup
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDGEINFER_SANITIZE=ON
	cmake --build $(ASAN_DIR) -j $(JOBS)

run: build
	$(RELEASE_DIR)/edgeinfer run -m "$(MODEL)" -p "$(PROMPT)" -n 64

test-release: build
	ctest --test-dir $(RELEASE_DIR) --output-on-failure -j $(JOBS)

test-asan: build-asan
	ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) -L unit

test: test-release test-asan

clean:
	rm -rf build
