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
  CGRT(nulls_launch(n, 0));
  CUDA(cudaStreamSynchronize(0));
  nulls_destroy(n);
  CUDA(cudaFree(y));
  return test_end("test_errors");
}
