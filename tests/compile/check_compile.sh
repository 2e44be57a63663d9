#!/usr/bin/env bash
# check_compile.sh BUILD_DIR TARGET [MESSAGE]: builds TARGET in BUILD_DIR. Without
# MESSAGE the build must succeed. With MESSAGE it must fail, and the compiler's output
# must hold exactly one "hmc model:" (or "hmc kernel:") message, the one containing
# MESSAGE, and no error that is not a static assertion.
set -uo pipefail
build=$1 target=$2 message=${3-}
out=$(cmake --build "$build" --target "$target" 2>&1)
rc=$?
if [[ -z $message ]]; then
  ((rc == 0)) && { echo "ok: $target compiles"; exit 0; }
  echo "FAIL: the complete model or kernel $target does not compile:"; echo "$out" | grep -m5 error; exit 1
fi
if ((rc == 0)); then echo "FAIL: $target compiled, though it lacks a member"; exit 1; fi
mapfile -t msgs < <(echo "$out" | grep -o 'hmc \(model\|kernel\): [^"]*' | sort -u)
errors=$(echo "$out" | grep -c 'error:')
if ((${#msgs[@]} != 1)); then
  echo "FAIL: $target: ${#msgs[@]} hmc model/kernel messages, not 1:"; printf '  %s\n' "${msgs[@]}"; exit 1
fi
if [[ ${msgs[0]} != *"$message"* ]]; then echo "FAIL: $target: the message does not name $message: ${msgs[0]}"; exit 1; fi
if ((errors != 1)); then
  echo "FAIL: $target: $errors compiler errors, not just the one message:"; echo "$out" | grep 'error:' | head -5; exit 1
fi
echo "ok: $target fails with one message: ${msgs[0]}"
