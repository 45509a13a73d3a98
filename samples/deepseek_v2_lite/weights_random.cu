/* weights_random.cu: the seed's random weights (weights.h has the
 * formula), made on the GPU, one launch a buffer. */
#include <stdio.h>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "weights.h"
#include "weights_hash.h"

__global__ void dsv2_fill_random(__nv_bfloat16 *out, size_t n, uint32_t key, float scale,
                                 float offset) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = __float2bfloat16_rn(dsv2_random_float(dsv2_bits24(key, i), scale, offset));
}

extern "C" int dsv2_random_device(const Dsv2Config *c, uint32_t seed,
                                  void *const device[DSV2_NBUFFERS], void *stream, char *err,
                                  size_t errlen) {
  if (dsv2_check_config(c, err, errlen))
    return 1;
  cudaStream_t s = (cudaStream_t)stream;
  int device_id, sms;
  cudaError_t e = cudaGetDevice(&device_id);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_id);
  if (e != cudaSuccess) {
    snprintf(err, errlen, "dsv2_random_device: %s", cudaGetErrorString(e));
    return 1;
  }
  for (int b = 0; b < DSV2_NBUFFERS; b++) {
    Dsv2BufferId id = (Dsv2BufferId)b;
    size_t n = dsv2_buffer_elems(c, id);
    if (!n)
      continue;
    if (!device[b]) {
      snprintf(err, errlen, "dsv2_random_device: no device buffer for %s", dsv2_buffer_name(id));
      return 1;
    }
    float scale, offset;
    dsv2_random_params(c, id, &scale, &offset);
    size_t blocks = (n + 255) / 256, most = (size_t)sms * 8;
    dsv2_fill_random<<<(unsigned)(blocks < most ? blocks : most), 256, 0, s>>>(
        (__nv_bfloat16 *)device[b], n, dsv2_buffer_key(seed, b), scale, offset);
    if ((e = cudaGetLastError()) != cudaSuccess) {
      snprintf(err, errlen, "dsv2_random_device: launching for %s: %s", dsv2_buffer_name(id),
               cudaGetErrorString(e));
      return 1;
    }
  }
  if ((e = cudaStreamSynchronize(s)) != cudaSuccess) {
    snprintf(err, errlen, "dsv2_random_device: %s", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
