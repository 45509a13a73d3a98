/* test_cond_code: the condition code the generated C spells with
 * CGRT_COND_COMPARE is the code the runtime decodes.  The instructions the
 * golden files held as numbers before they were spelled symbolically keep
 * their values (so the generated tables did not change), and every
 * comparison's type, operator and negation come back out of
 * CGRT_COND_TYPE, CGRT_COND_OP and CGRT_COND_NEGATE, inside a uint8_t. */
#include "cgrt_abi.h"

#include <stdio.h>

/* Numbers the golden tables held (tests/dot, tests/golden, 2026-12-03). */
_Static_assert(CGRT_COND_COMPARE(CGRT_U32, CGRT_CMP_GT, 0) == 82, "u32 >");
_Static_assert(CGRT_COND_COMPARE(CGRT_F32, CGRT_CMP_GT, 0) == 130, "f32 >");
_Static_assert(CGRT_COND_COMPARE(CGRT_U32, CGRT_CMP_EQ, 0) == 74, "u32 ==");
_Static_assert(CGRT_COND_COMPARE(CGRT_F32, CGRT_CMP_LT, 0) == 126, "f32 <");
_Static_assert(CGRT_COND_COMPARE(CGRT_I32, CGRT_CMP_GT, 0) == 34, "i32 >");
_Static_assert(CGRT_COND_AND == 0 && CGRT_COND_OR == 1, "and, or");
_Static_assert(CGRT_COND_COMPARE(CGRT_F64, CGRT_NCMP - 1, 1) <= 255, "a code fits a uint8_t");

int main(void) {
  int failures = 0, checks = 0;
  for (int t = CGRT_I8; t <= CGRT_F64; t++)
    for (int op = 0; op < CGRT_NCMP; op++)
      for (int neg = 0; neg < 2; neg++) {
        const unsigned char c = (unsigned char)CGRT_COND_COMPARE(t, op, neg);
        checks++;
        if (c < CGRT_COND_CMP || CGRT_COND_TYPE(c) != t || CGRT_COND_OP(c) != op ||
            CGRT_COND_NEGATE(c) != neg) {
          failures++;
          printf("FAIL: type %d, op %d, negate %d: code %u decodes as %d, %d, %d\n", t, op, neg, c,
                 CGRT_COND_TYPE(c), CGRT_COND_OP(c), CGRT_COND_NEGATE(c));
        }
      }
  printf("unit.cond_code: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
