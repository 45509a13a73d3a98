#include "out.h"
extern "C" __global__ void k(float *OUT_H_) {}
