#!/bin/sh
# Bounded fuzzing, run by `make fuzz` and `make test`: each libFuzzer target
# of BUILD_DIR (configured with -DMHA_FUZZ=ON) runs SECONDS seconds, starting
# from the seed corpus in the repo. New inputs go to BUILD_DIR/fuzz/, never to
# the repo; a crash leaves its input there, and the run fails. Each target
# ends with one line to grep for (libFuzzer's stat::number_of_executed_units):
#
#   fuzz: mha-fuzz-npy: 1234567 executions in 60 s, corpus 345 inputs: ok
#
#   run-fuzzers.sh BUILD_DIR SECONDS
set -eu
build=$1
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
out=$build/fuzz
# A report must end the run with a crash, as in the test suite; LLVM's own
# allocations at exit are not ours to fix (test/sanitizers/lsan.supp).
export ASAN_OPTIONS=abort_on_error=1
export UBSAN_OPTIONS=abort_on_error=1:halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$here/../sanitizers/lsan.supp

run() {
  name=$1
  corpus=$2
  shift 2
  mkdir -p "$out/$corpus" "$out/artifacts"
  echo "$name: fuzzing for $seconds s from test/fuzz/$corpus"
  "$build/bin/$name" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$name-" "$@" \
    "$out/$corpus" "$here/$corpus" > "$out/$name.log" 2>&1 || {
    tail -n 60 "$out/$name.log"
    echo "$name: FAILED; the input is in $out/artifacts/ (log: $out/$name.log)"
    exit 1
  }
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log")
  inputs=$(find "$out/$corpus" -type f | wc -l)
  echo "fuzz: $name: ${executions:-?} executions in $seconds s, corpus $inputs inputs: ok"
}

run mha-fuzz-npy corpus-npy -max_len=1024
run mha-fuzz-graph corpus-graph -max_len=4096 -only_ascii=1 -timeout=30 \
  -dict="$here/graph.dict"
run mha-fuzz-options corpus-options -max_len=256 -only_ascii=1 -timeout=30 \
  -dict="$here/options.dict"
run mha-fuzz-library corpus-library -max_len=512
run mha-fuzz-session corpus-session -max_len=256
run mha-fuzz-paged corpus-paged -max_len=64
