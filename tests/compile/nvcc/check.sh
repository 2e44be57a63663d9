#!/usr/bin/env bash
# check.sh SOURCE_DIR [--expect-host-call]: the device-only rules of the model kernels,
# checked by nvcc without a CUDA build of Kokkos. Compiles device_kernels.cu (every shipped
# model's and posteriordb example's device members, the leapfrog, hmc::dist, linalg, the
# ODE solver) against kokkos_standin/ (a stand-in,
# not Kokkos) with `nvcc -c`, never linking or running it. A host-only function called
# from device code is an error (diagnostics below); so is any other warning.
#   without --expect-host-call: must compile with no error and no warning.
#   with it: compiled with HMC_NVCC_PROVOKE (host_call_model.hpp calls a host-only member
#   from a KOKKOS_INLINE_FUNCTION); must fail, with the host-call diagnostic naming it.
# Exit 77 (ctest: skipped) when there is no nvcc: $CUDACXX, nvcc on PATH, /usr/local/cuda/bin/nvcc.
set -uo pipefail
root=${1:?usage: check.sh SOURCE_DIR [--expect-host-call]}
mode=${2-}
here=$root/tests/compile/nvcc

nvcc=""
for candidate in "${CUDACXX-}" "$(command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc; do
  if [[ -n $candidate && -x $candidate ]]; then nvcc=$candidate; break; fi
done
[[ -n $nvcc ]] || { echo "skipped: no nvcc (\$CUDACXX, PATH, /usr/local/cuda/bin/nvcc)"; exit 77; }

# nvcc's numbers (CUDA 12 and 13): 20011, 20014 a __host__ function called from a
# __host__ __device__ one (with and without the names); 20013, 20015 the same for a
# constexpr __host__ function (only without --expt-relaxed-constexpr); 20094, 20095,
# 20096 a host variable read, written or its address taken in device code. A call from a
# __global__ or __device__ function is an error already. -Werror all-warnings: the rest.
flags=(-std=c++17 -x cu -c -o /dev/null --expt-relaxed-constexpr --extended-lambda -arch=sm_90
  --display-error-number "--diag-error=20011,20013,20014,20015,20094,20095,20096" -Werror all-warnings
  -I"$here/kokkos_standin" -I"$root/src" -I"$root/models" -I"$root" -I"$here")
[[ $mode == --expect-host-call ]] && flags+=(-DHMC_NVCC_PROVOKE)

start=$SECONDS
out=$("$nvcc" "${flags[@]}" "$here/device_kernels.cu" 2>&1)
rc=$?
took=$((SECONDS - start))
warnings=$(grep -c -i 'warning' <<<"$out")

if [[ $mode == --expect-host-call ]]; then
  if ((rc == 0)); then
    echo "FAIL: device_kernels.cu with HMC_NVCC_PROVOKE compiled: the host call was not caught"; exit 1
  fi
  if ! grep -q 'calling a __host__ function.*HostCallModel::coin_term\|host_call_model.hpp.*calling a __host__' <<<"$out"; then
    echo "FAIL: nvcc failed, but not on the host call of host_call_model.hpp:"; grep -m10 -i 'error\|warning' <<<"$out"
    exit 1
  fi
  echo "ok: nvcc rejects the host call of host_call_model.hpp (${took}s):"
  grep -m3 'calling a __host__' <<<"$out"
  exit 0
fi

if ((rc != 0 || warnings != 0)); then
  echo "FAIL: device code breaks the device-only rules (nvcc exit $rc, $warnings warnings, ${took}s):"
  echo "$out" | head -60
  echo "(nvcc stops at the first error: fix it and rerun, or rerun without --diag-error/-Werror to list them all)"
  exit 1
fi
echo "ok: the model kernels keep the device-only rules under $("$nvcc" --version | grep -o 'release [0-9.]*') (${took}s)"
