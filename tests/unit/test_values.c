/* test_values: the bits cgc emits for constants, fill values and scalar
 * initialisers (value_bits), against encodings worked out by hand:
 * rounding to nearest even, subnormals, the largest finite values, and
 * integers cut to their width. */
#include "cgc.h"

#include <math.h>
#include <stdio.h>

static int failures, checks;

static void expect(const char *what, Type t, bool is_float, int64_t i, double f, uint64_t want) {
  uint64_t got = value_bits(t, is_float, i, f);
  checks++;
  if (got != want) {
    failures++;
    printf("FAIL: %s in %s: 0x%llx, expected 0x%llx\n", what, type_name(t),
           (unsigned long long)got, (unsigned long long)want);
  }
}

#define F(t, v, want) expect(#v, t, true, 0, v, want)
#define I(t, v, want) expect(#v, t, false, v, 0, want)

int main(void) {
  /* f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. */
  F(TY_F16, 1.0, 0x3c00);
  F(TY_F16, -2.0, 0xc000);
  F(TY_F16, 0.5, 0x3800);
  F(TY_F16, 1.5, 0x3e00);
  F(TY_F16, 65504.0, 0x7bff);                    /* largest finite */
  F(TY_F16, 0.1, 0x2e66);                        /* 0.0999755859375 */
  F(TY_F16, 1.0 + 1.0 / 2048, 0x3c00);           /* a tie: to even */
  F(TY_F16, 1.0 + 3.0 / 2048, 0x3c02);           /* a tie: to even, up */
  F(TY_F16, ldexp(1.0, -14), 0x0400);            /* smallest normal */
  F(TY_F16, ldexp(1.0, -24), 0x0001);            /* smallest subnormal */
  F(TY_F16, ldexp(1.0, -25), 0x0000);            /* a tie: to even (zero) */
  F(TY_F16, ldexp(3.0, -26), 0x0001);            /* rounds up to the smallest */
  F(TY_F16, ldexp(1023.0, -24), 0x03ff);         /* largest subnormal */
  F(TY_F16, 1023.5 * ldexp(1.0, -24), 0x0400);  /* a tie: to even, into the normals */
  F(TY_F16, 2047.0 * ldexp(1.0, -24), 0x07ff);  /* exact, just below 2^-13 */
  F(TY_F16, -0.0, 0x8000);
  I(TY_F16, 2048, 0x6800);
  /* bf16: 1 sign, 8 exponent (bias 127), 7 mantissa bits. */
  F(TY_BF16, 1.0, 0x3f80);
  F(TY_BF16, -2.5, 0xc020);
  F(TY_BF16, 3.14159265358979, 0x4049);          /* 3.140625 */
  F(TY_BF16, 1.0 + 1.0 / 256, 0x3f80);           /* a tie: to even */
  F(TY_BF16, 1.0 + 3.0 / 256, 0x3f82);           /* a tie: to even, up */
  F(TY_BF16, ldexp(1.0, -126), 0x0080);          /* smallest normal */
  F(TY_BF16, ldexp(1.0, -133), 0x0001);          /* smallest subnormal */
  F(TY_BF16, 3.3895313892515355e38, 0x7f7f);     /* largest finite */
  /* f32 and f64: the C conversion. */
  F(TY_F32, 0.75, 0x3f400000);
  F(TY_F32, 0.1, 0x3dcccccd);
  F(TY_F64, 2.5, 0x4004000000000000);
  F(TY_F64, -1.0, 0xbff0000000000000);
  I(TY_F32, 16777216, 0x4b800000);
  /* Integers: two's complement cut to the width. */
  I(TY_I8, -3, 0xfd);
  I(TY_I16, -300, 0xfed4);
  I(TY_I32, -123456, 0xfffe1dc0);
  I(TY_I64, -1, 0xffffffffffffffff);
  I(TY_U8, 200, 0xc8);
  I(TY_U32, 4000000000, 0xee6b2800);
  I(TY_U64, 0x100000001, 0x100000001);
  printf("test_values: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
