#!/bin/sh
# expect-exit.sh CODE COMMAND [ARG...]: runs COMMAND and succeeds only when it
# exits with CODE, so that one RUN line checks both the message (piped to
# FileCheck) and the exit code. Unlike `not`, another non-zero code fails,
# and so does a crash (a signal, or a sanitizer report, which aborts).
#
# Used as `%expect-exit 2 mha-run ... 2>&1 | FileCheck %s` (test/lit.cfg.py).
expected=$1
shift
"$@"
code=$?
if [ "$code" -ne "$expected" ]; then
  echo "expect-exit: '$1' exited with $code, expected $expected" >&2
  exit 1
fi
exit 0
