/* test_errors: failures come back as a status and a message that names
 * the graph, the node, its .cgraph position and CUDA's error; misuse gets
 * CGRT_ERROR_INVALID. */
#include "errors_graph.h"
#include "gpu_test.h"

int main(void) {
  test_start("test_errors");
  int dev, major, minor;
  CUDA(cudaGetDevice(&dev));
  CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (major * 10 + minor != OTHER_ARCH) {
    errors *g = (errors *)&dev;
    cgrt_status s = errors_create(&g, NULL);
    const char *msg = cgrt_last_error();
    printf("test_errors: %s\n", msg);
    EXPECT(s == CGRT_ERROR_CUDA, "status %d", s);
    EXPECT(g == NULL, "a failed create left *out set");
    EXPECT(strstr(msg, "errors.cgraph:8:5: node missing: ") != NULL, "message: %s", msg);
    EXPECT(strstr(msg, "(cudaError") != NULL, "no CUDA error name in: %s", msg);
  }
  nulls *n = NULL;
  nulls_extern ext = {NULL};
  EXPECT(nulls_create(&n, &ext, NULL) == CGRT_ERROR_INVALID, "a NULL extern buffer");
  EXPECT(strstr(cgrt_last_error(), "'y' is NULL") != NULL, "message: %s", cgrt_last_error());
  EXPECT(nulls_create(&n, NULL, NULL) == CGRT_ERROR_INVALID, "a NULL ext");
  EXPECT(nulls_create(NULL, &ext, NULL) == CGRT_ERROR_INVALID, "a NULL out");
  int on_host[32];
  ext.y = on_host;
  EXPECT(nulls_create(&n, &ext, NULL) == CGRT_ERROR_INVALID, "host memory as a device buffer");
  EXPECT(strstr(cgrt_last_error(), "not device memory") != NULL, "message: %s",
         cgrt_last_error());
  void *y;
  CUDA(cudaMalloc(&y, 32 * sizeof(uint32_t)));
  ext.y = y;
  CGRT(nulls_create(&n, &ext, NULL));
  EXPECT(nulls_bind_y(n, NULL) == CGRT_ERROR_INVALID, "binding NULL");
  EXPECT(nulls_launch(NULL, 0) == CGRT_ERROR_INVALID, "launching NULL");
  EXPECT(strstr(cgrt_last_error(), "the graph is NULL") != NULL, "message: %s",
         cgrt_last_error());
  EXPECT(nulls_bind_y(NULL, y) == CGRT_ERROR_INVALID, "binding in a NULL graph");
  EXPECT(nulls_set_s(NULL, 1) == CGRT_ERROR_INVALID, "setting in a NULL graph");
  EXPECT(nulls_get_s(NULL, &(uint32_t){0}) == CGRT_ERROR_INVALID, "getting from a NULL graph");
  EXPECT(nulls_get_s(n, NULL) == CGRT_ERROR_INVALID, "getting into NULL");
  EXPECT(nulls_buffer_z(NULL) == NULL, "a NULL graph's buffer");
  EXPECT(nulls_user(NULL) == NULL, "a NULL graph's user pointer");
  /* A stream of another device (needs two). */
  int devices = 0;
  CUDA(cudaGetDeviceCount(&devices));
  if (devices >= 2) {
    cudaStream_t other;
    CUDA(cudaSetDevice(1));
    CUDA(cudaStreamCreate(&other));
    CUDA(cudaSetDevice(0));
    EXPECT(nulls_launch(n, other) == CGRT_ERROR_INVALID, "a stream of device 1");
    EXPECT(strstr(cgrt_last_error(), "the stream belongs to device 1, but the graph was made "
                                     "on device 0") != NULL,
           "message: %s", cgrt_last_error());
    CUDA(cudaSetDevice(1));
    EXPECT(nulls_launch(n, 0) == CGRT_ERROR_INVALID, "device 1 current, the default stream");
    EXPECT(strstr(cgrt_last_error(), "the current device is 1") != NULL, "message: %s",
           cgrt_last_error());
    CUDA(cudaStreamDestroy(other));
    CUDA(cudaSetDevice(0));
  } else {
    printf("test_errors: one GPU: a stream of another device is not tried\n");
  }
  CGRT(nulls_launch(n, 0));
  CUDA(cudaStreamSynchronize(0));
  nulls_destroy(n);
  CUDA(cudaFree(y));
  return test_end("test_errors");
}
