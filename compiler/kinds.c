/* kinds.c: what each kind of node is, in one table. */
#include "cgc.h"

const NodeKindInfo node_kinds[NK_COUNT] = {
    [NK_KERNEL] = {"kernel", "CGRT_KERNEL_NODE", .launch = true, .programmatic = true, .dot = ""},
    [NK_COPY] = {"copy", "CGRT_COPY_NODE", .dot = ", style=rounded"},
    [NK_FILL] = {"fill", "CGRT_FILL_NODE", .dot = ", style=rounded"},
    [NK_WHILE] = {"while", "CGRT_WHILE_NODE", .bodies = true, .dot = ", shape=diamond"},
    [NK_IF] = {"if", "CGRT_IF_NODE", .bodies = true, .dot = ", shape=diamond"},
    [NK_SWITCH] = {"switch", "CGRT_SWITCH_NODE", .bodies = true, .dot = ", shape=diamond"},
    [NK_CAPTURE] = {"capture", "CGRT_CAPTURE_NODE", .dot = ", peripheries=2"},
    [NK_COLLECTIVE] = {"collective", "CGRT_COLLECTIVE_NODE", .dot = ", peripheries=2, style=rounded"},
};
