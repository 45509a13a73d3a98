/* kinds.c: what each kind of node is, in one table. */
#include "cgc.h"

const NodeKindInfo node_kinds[NK_COUNT] = {
    [NK_KERNEL] = {"kernel", "CGRT_KERNEL_NODE", .launch = true, .programmatic = true,
                   .called = true, .dot = ""},
    [NK_COPY] = {"copy", "CGRT_COPY_NODE", .memory = true, .dot = ", style=rounded"},
    [NK_FILL] = {"fill", "CGRT_FILL_NODE", .memory = true, .dot = ", style=rounded"},
    [NK_WHILE] = {"while", "CGRT_WHILE_NODE", .bodies = true, .loop = true,
                  .dot = ", shape=diamond"},
    [NK_IF] = {"if", "CGRT_IF_NODE", .bodies = true, .an = true, .dot = ", shape=diamond"},
    [NK_SWITCH] = {"switch", "CGRT_SWITCH_NODE", .bodies = true, .cases = true,
                   .dot = ", shape=diamond"},
    [NK_CAPTURE] = {"capture", "CGRT_CAPTURE_NODE", .called = true, .captured = true,
                    .dot = ", peripheries=2"},
    [NK_COLLECTIVE] = {"collective", "CGRT_COLLECTIVE_NODE", .called = true, .captured = true,
                       .collective = true, .dot = ", peripheries=2, style=rounded"},
};

const NamedConstant collective_kinds[NCOLLECTIVES] = {
    [CGRT_ALL_REDUCE] = {"all_reduce", "CGRT_ALL_REDUCE"},
    [CGRT_ALL_GATHER] = {"all_gather", "CGRT_ALL_GATHER"},
    [CGRT_REDUCE_SCATTER] = {"reduce_scatter", "CGRT_REDUCE_SCATTER"},
    [CGRT_BROADCAST] = {"broadcast", "CGRT_BROADCAST"},
};

_Static_assert((int)CMP_EQ == (int)CGRT_CMP_EQ && (int)CMP_GE == (int)CGRT_CMP_GE &&
                   (int)NCOMPARISONS == (int)CGRT_NCMP,
               "the compiler's comparisons are the runtime's, in order");
const NamedConstant comparisons[NCOMPARISONS] = {
    [CMP_EQ] = {"==", "CGRT_CMP_EQ"}, [CMP_NE] = {"!=", "CGRT_CMP_NE"},
    [CMP_LT] = {"<", "CGRT_CMP_LT"},  [CMP_LE] = {"<=", "CGRT_CMP_LE"},
    [CMP_GT] = {">", "CGRT_CMP_GT"},  [CMP_GE] = {">=", "CGRT_CMP_GE"},
};

const NamedConstant reductions[NREDUCTIONS] = {
    [CGRT_SUM] = {"sum", "CGRT_SUM"}, [CGRT_PROD] = {"prod", "CGRT_PROD"},
    [CGRT_MAX] = {"max", "CGRT_MAX"}, [CGRT_MIN] = {"min", "CGRT_MIN"},
    [CGRT_AVG] = {"avg", "CGRT_AVG"},
};
