// The decision per instruction family: executed, or refused by lowering with
// "not supported by the CPU engine". Refused families are the first version's exclusions
// (docs/emu.md section 9) and the legacy forms nothing in the suite uses.
#include "emu/support.h"

#include <algorithm>
#include <cstdint>

namespace ptxforge::emu {

namespace {

constexpr std::string_view kExecuted[] = {
    "add", "sub", "addc", "subc", "mul", "mad", "madc", "mul24", "mad24", "div", "rem", "abs", "neg", "min",
    "max", "popc", "clz", "bfind", "brev", "bfe", "bfi", "dp4a", "dp2a", "copysign", "fma", "rcp", "sqrt",
    "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "setp", "set", "selp", "slct", "and", "or", "xor", "not",
    "cnot", "lop3", "shf", "shl", "shr", "mov", "shfl.sync", "prmt", "ld", "ldu", "st", "prefetch",
    "prefetchu", "cvta", "cvt", "bra", "call", "ret", "exit", "bar", "barrier", "bar.warp.sync", "membar",
    "fence", "atom", "red", "vote.sync", "match.sync", "activemask", "redux.sync", "elect.sync", "nanosleep",
    "trap", "brkpt", "pmevent"
};

constexpr std::string_view kUnsupported[] = {
    "sad", "fns", "szext", "bmsk", "testp", "shfl", "st.async", "st.bulk", "multimem.ld_reduce",
    "multimem.st", "multimem.red", "applypriority", "discard", "createpolicy", "isspacep", "cvt.pack", "mapa",
    "getctarank", "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
    "cp.async.mbarrier.arrive", "cp.async.bulk", "cp.async.bulk.tensor", "cp.reduce.async.bulk",
    "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor",
    "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "tensormap.replace", "ldmatrix", "stmatrix",
    "movmatrix", "mma", "mma.sp", "mma.sp::ordered_metadata", "wmma.load", "wmma.store", "wmma.mma",
    "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "wgmma.mma_async", "wgmma.mma_async.sp",
    "brx.idx", "barrier.cluster", "red.async", "vote", "griddepcontrol", "mbarrier.init", "mbarrier.inval",
    "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.expect_tx", "mbarrier.complete_tx",
    "mbarrier.test_wait", "mbarrier.try_wait", "mbarrier.pending_count", "setmaxnreg",
    "tensormap.cp_fenceproxy", "clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.query_cancel",
    "alloca", "stacksave", "stackrestore", "istypep", "tex", "tld4", "txq", "suld", "sust", "sured", "suq",
    "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset", "vadd2", "vsub2", "vavrg2",
    "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4",
    "vset4", "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.ld",
    "tcgen05.st", "tcgen05.wait", "tcgen05.cp", "tcgen05.shift", "tcgen05.mma", "tcgen05.commit",
    "tcgen05.fence"
};

}  // namespace

std::optional<Support> family_support(std::string_view family) {
  if (std::find(std::begin(kExecuted), std::end(kExecuted), family) != std::end(kExecuted)) return Support::executed;
  if (std::find(std::begin(kUnsupported), std::end(kUnsupported), family) != std::end(kUnsupported))
    return Support::unsupported;
  return std::nullopt;
}

}  // namespace ptxforge::emu
