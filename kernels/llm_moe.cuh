// llm_moe.cuh: mixture of experts on the device (DeepSeek-V2's MoE layer):
// the router's softmax and top-k, then the chosen experts and the shared
// ones, their ids read from device memory.  Nothing goes back to the host.
#ifndef LLM_MOE_CUH
#define LLM_MOE_CUH

#include <cooperative_groups.h>

#include "llm_gemv.cuh"

namespace llm {

constexpr int MOE_MAX_EXPERTS = 256; // the router's last block holds every logit of a token
constexpr int MOE_MAX_TOPK = 8;

// How Moe::down stages its token's activations in shared memory.  The
// library's kernels take Whole: all of them after the wait, then trigger().
// The others are what bench_llm_kernels measures against it (BENCHMARKS.md,
// run AX), none faster in the model: Split, the shared experts' (the rows
// it reads first) after the wait and the rest while those are summed;
// TriggerFirst, trigger() before staging; Early, staged before the wait,
// right only where no kernel before writes them (the bench's chain of down
// calls): what staging after the wait costs.
enum class DownStage { Whole, Split, TriggerFirst, Early };

// How far Moe::route goes in clusters: the library's kernel takes Full.
// The others are what bench_llm_kernels --only router times against it,
// each a step shorter: Join, the cluster's logits joined and written but
// no softmax or top k; Logits, each block's logits written where it
// computed them, without the cluster's barriers.
enum class RouteStop { Full, Join, Logits };

// The router's stage: once its wait on o_proj is over it lets the next
// kernel (llm_moe_gate_up) start, then stages its activations as StageX.
// gate_up's shared blocks need only x, complete once that wait is over, so
// they stream about 1 us sooner than if the router let gate_up start after
// staging, as every other kernel does (gemv_blocks): DeepSeek-V2-Lite's
// step 1.1% faster at 512 keys on an H200, 0.9% at 4,096, 0.2% with 8
// sequences (BENCHMARKS.md, run CB); 0.8% on an H100 (run CD).  Letting
// the next kernel start a second time, after staging, changes nothing.
struct StageTriggered {
  template <int MB>
  __device__ void run(bf16 *xs, const GemvArgs &a, int grp, bool fast, float *red) const {
    trigger();
    StageX().run<MB>(xs, a, grp, fast, red);
  }
};

template <int R, int U> struct Moe {
  static constexpr int PER_BLOCK = WARPS * R;

  // Router: blocks (gridDim.x of them) share token blockIdx.y's expert
  // logits, f32 from the normalised activations as the published code
  // computes them; one block then takes the softmax and the top k (k <= 8,
  // largest first; no renormalisation).  Launched as clusters of gridDim.x
  // blocks (compute capability 9.0), the blocks write their logits into the
  // first block's shared memory and meet at the cluster's barrier;
  // otherwise into `logits`, and the last block to finish (an atomic count)
  // takes them, setting count[t] back to 0.  Either way `logits` holds them
  // after.  (RS: see RouteStop; without clusters the kernel is Full.  A
  // stage other than StageTriggered is the bench's: see gemv_blocks.  Its
  // Mark's phases, llm_device.cuh, in clusters: 1 the block's logits
  // computed, 2 the cluster's joined, 3 the top k written.)
  template <RouteStop RS = RouteStop::Full, class Stage = StageTriggered, class Mark = NoMark>
  static __device__ void route(const bf16 *w, const bf16 *x, const bf16 *g, float *logits,
                               uint32_t *count, uint32_t *ids, float *weights, int experts, int k,
                               int m, int topk, float eps, const Stage &stage = Stage(),
                               const Mark &mark = Mark()) {
    __shared__ bool last;
    const int t = blockIdx.y;
    if (experts > MOE_MAX_EXPERTS || topk > MOE_MAX_TOPK || topk > experts)
      __trap();
    if (t >= m) {
      wait();
      trigger();
      return;
    }
    GemvArgs a{w, x + (size_t)t * k, g, nullptr, logits + (size_t)t * experts, nullptr, experts, k, 1,
               eps, 0, 0, k, 0};
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ float joined[MOE_MAX_EXPERTS]; // the cluster's logits, in its first block
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    if (cluster.num_blocks() == gridDim.x && cluster.dim_blocks().y == 1) {
      if constexpr (RS == RouteStop::Logits) {
        gemv_blocks<1, R, U, Epi::F32>(a, blockIdx.x, gridDim.x, stage);
        return;
      }
      // Every block has started (its shared memory may be written) before
      // the wait on the kernel before: this barrier costs nothing there.
      cluster.sync();
      a.yf = cluster.map_shared_rank(joined, 0);
      gemv_blocks<1, R, U, Epi::F32>(a, blockIdx.x, gridDim.x, stage);
      mark(1);
      cluster.sync(); // every block's logits are in the first block's joined
      mark(2);
      if (cluster.block_rank() == 0 && threadIdx.x < 32) {
        for (int e = threadIdx.x; e < experts; e += 32)
          logits[(size_t)t * experts + e] = joined[e];
        if constexpr (RS == RouteStop::Full)
          top_k(joined, false, t, experts, topk, ids, weights);
        mark(3);
      }
      return;
    }
#endif
    gemv_blocks<1, R, U, Epi::F32>(a, blockIdx.x, gridDim.x, stage);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
      last = atomicAdd(&count[t], 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last || threadIdx.x >= 32)
      return;
    __threadfence();
    top_k(logits + (size_t)t * experts, true, t, experts, topk, ids, weights);
    if (threadIdx.x == 0)
      count[t] = 0;
  }

  // The softmax of token t's logits and its top k, by one warp: from global
  // memory written by other blocks (read past the L1), or from shared memory.
  // S experts a lane, as few as hold them all (the slots past them would
  // add only zeros to the sums and never be chosen).
  static __device__ void top_k(const float *lg, bool global, int t, int experts, int topk,
                               uint32_t *ids, float *weights) {
    if (experts <= 64)
      top_k_slots<2>(lg, global, t, experts, topk, ids, weights);
    else if (experts <= 128)
      top_k_slots<4>(lg, global, t, experts, topk, ids, weights);
    else
      top_k_slots<MOE_MAX_EXPERTS / 32>(lg, global, t, experts, topk, ids, weights);
  }
  template <int S>
  static __device__ void top_k_slots(const float *lg, bool global, int t, int experts, int topk,
                                     uint32_t *ids, float *weights) {
    const int lane = threadIdx.x & 31;
    float v[S], mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < S; i++) {
      const int e = lane + 32 * i;
      v[i] = e < experts ? (global ? __ldcg(lg + e) : lg[e]) : -INFINITY;
      mx = fmaxf(mx, v[i]);
    }
    mx = warp_max(mx);
    float sum = 0;
#pragma unroll
    for (int i = 0; i < S; i++) {
      v[i] = lane + 32 * i < experts ? expf(v[i] - mx) : 0.0f;
      sum += v[i];
    }
    sum = warp_sum(sum);
#pragma unroll
    for (int i = 0; i < S; i++)
      v[i] = lane + 32 * i < experts ? v[i] / sum : -1.0f;
    // Lane j keeps the j-th choice; the chosen value comes back from its
    // ordered bits, so no lane indexes v[] by a runtime slot (which would
    // put v[] in local memory).
    uint32_t my_id = 0;
    float my_w = 0;
    for (int j = 0; j < topk; j++) {
      // The largest weight, the lowest expert first among equal ones (the
      // largest argmax_key): each lane's best, then the warp's value by one
      // reduction and the lowest expert holding it by another.
      uint32_t bu = 0, bi = 0xffffffffu;
#pragma unroll
      for (int i = 0; i < S; i++) {
        const uint32_t u = ordered_bits(v[i]); // past 0 for any value, -1 and -inf too
        if (u > bu) { // i ascending: the lane's lowest expert among equal values
          bu = u;
          bi = (uint32_t)(lane + 32 * i);
        }
      }
      const uint32_t top = __reduce_max_sync(0xffffffffu, bu);
      const uint32_t e = __reduce_min_sync(0xffffffffu, bu == top ? bi : 0xffffffffu);
#pragma unroll
      for (int i = 0; i < S; i++)
        v[i] = (uint32_t)(lane + 32 * i) == e ? -1.0f : v[i];
      if (lane == j) {
        my_id = e;
        my_w = from_ordered_bits(top);
      }
    }
    if (lane < topk) {
      ids[(size_t)t * topk + lane] = my_id;
      weights[(size_t)t * topk + lane] = my_w;
    }
  }

  // The shared experts' blocks, all m tokens at once: past 2 tokens, one
  // chunk a row in flight (each chunk then feeds 4 or 8 dot products), so
  // that the kernel's registers allow 4 blocks a multiprocessor.  Early,
  // they neither wait nor let the next kernel start (gate_up says why); at
  // 2 tokens never (gate_up does not ask), since that instance would then
  // spill registers.
  static __device__ __forceinline__ void shared_gate_up(const GemvArgs &a, int b, int nbs,
                                                        bool early) {
    if (a.m <= 1)
      gemv_blocks<1, R, U, Epi::Swiglu>(a, b, nbs, StageX(), !early);
    else if (a.m <= 2)
      gemv_blocks<2, R, U, Epi::Swiglu>(a, b, nbs);
    else if (a.m <= 4)
      gemv_blocks<4, R, 1, Epi::Swiglu>(a, b, nbs, StageX(), !early);
    else
      gemv_blocks<MAX_TOKENS, R, 1, Epi::Swiglu>(a, b, nbs, StageX(), !early);
  }

  // Gate and up projections with SwiGLU of the shared experts (fs units,
  // every token) and of each token's topk routed experts (fe units each):
  // act[t] = [expert ids[t][0]'s fe | ... | ids[t][topk - 1]'s | shared fs].
  // Shared blocks come first; a routed block knows its rows only once the
  // router has finished.  The shared experts need only x, which the kernel
  // two before (o_proj) writes: the router waits on it before it lets this
  // kernel start, so x is complete when this one starts, and the shared
  // blocks run through without waiting on the router, beside it (but at 2
  // tokens: shared_gate_up; doc/kernels.md has the measurements).  The
  // routed blocks wait (one of them at least: the last unit is routed), so
  // that the kernel still lets the next start, and ends, only after the
  // router: llm_moe_down reads the ids before its wait.  With no routed
  // units the shared blocks wait as every kernel does, and with
  // SharedEarly false always (what bench_llm_kernels --only layer measures
  // the early start against).
  template <bool SharedEarly = true>
  static __device__ void gate_up(const bf16 *w, const bf16 *w_shared, const bf16 *x, const bf16 *g,
                                 const uint32_t *ids, bf16 *act, int fe, int fs, int topk, int k,
                                 int m, float eps) {
    const int nbs = (fs + PER_BLOCK - 1) / PER_BLOCK, nbr = (fe + PER_BLOCK - 1) / PER_BLOCK;
    const int total = nbs + m * topk * nbr;
    const int act_token = topk * fe + fs;
    for (int b = blockIdx.x; b < total || b == (int)blockIdx.x; b += gridDim.x) {
      if (b != (int)blockIdx.x)
        __syncthreads(); // every warp is done with the staged activations
      if (b >= total) { // nothing for this block: it still waits and lets the next start
        wait();
        trigger();
      } else if (b < nbs) {
        GemvArgs a{w_shared, x, g, act + (size_t)topk * fe, nullptr, nullptr, fs, k, m, eps,
                   0, 0, k, act_token};
        shared_gate_up(a, b, nbs, SharedEarly && total > nbs && m != 2);
      } else {
        // Past one token, the blocks of a row block are adjacent for every
        // (token, slot): tokens that chose the same expert then read its
        // rows at about the same time, and all but the first from the L2.
        const int r = b - nbs, pairs = m * topk;
        const int pair = m > 1 ? r % pairs : r / nbr, rb = m > 1 ? r / pairs : r % nbr;
        const int t = pair / topk, slot = pair % topk;
        wait();
        const uint32_t e = ids[(size_t)t * topk + slot];
        GemvArgs a{w + (size_t)e * 2 * fe * k, x + (size_t)t * k, g,
                   act + (size_t)t * act_token + (size_t)slot * fe, nullptr, nullptr, fe, k, 1, eps,
                   0, 0, k, 0};
        gemv_blocks<1, R, U, Epi::Swiglu>(a, rb, nbr);
      }
    }
  }

  // Down projections of a token's experts, each rounded to bf16,
  // weighted in f32 and summed, rounded; the shared experts' added, rounded;
  // all added into the residual x, rounded (as the published code does).
  // A warp takes one output d, and reads its weights as one stream: the
  // shared row (fs values, segment 0), then the row of each of the token's
  // experts (fe values each, segments 1 to topk), lane l taking the 16-byte
  // chunks l, l + 32, ... of that stream, with DU chunks in flight across
  // the rows' ends, so that the weights never wait for a row to finish.
  // A lane keeps one sum and, where its chunks cross into the next segment,
  // leaves the sum in shared memory (part[warp][segment][lane]); the warp
  // adds each segment's at the end.  The activations are staged in the
  // stream's order (a chunk's at xs[c], whatever its segment) and each
  // segment's row and end are in shared memory, read only where a position
  // crosses an end, so that a chunk costs its load, its dot product and
  // two compares: about 35 instructions in the SASS of run BM
  // (BENCHMARKS.md), against about 54 with the position kept as a segment
  // and an offset in it.
  //
  // The expert ids are read before the wait on the kernel before, so that
  // the experts' rows are in flight before it ends, as the shared row is;
  // and their weights and the residual, so that the sums' end waits on no
  // load.  They must be complete when that kernel lets this one start:
  // they are after llm_moe_gate_up, which lets the next kernel start only
  // once its routed blocks have waited on the router (which wrote the ids
  // and weights after its own wait on o_proj, which wrote the residual).
  static constexpr int DU = 2 * U;
  // xs[c], xs[nch + c] = the 8 values of chunk c of a row's stream in
  // f32, for c < nch (the block calls it together): unpacked once here,
  // not at every use.  The stream's order is not act's: act holds the
  // experts' chunks [0, lo), then the shared experts' [lo, nch), and the
  // stream the shared first, so act's chunk c goes to position
  // place(c), and a lane's chunk of the stream is at xs[c] whatever its
  // segment.  The halves apart, so that lanes reading chunks c, c + 1, ...
  // read 16 bytes apart, without bank conflicts (32 bytes apart, 8 lanes
  // would meet in pairs).  Every chunk is copied at once (cp.async: one
  // round trip to the L2, no registers held), bf16 chunk c into
  // xs[nch + place(c)], where its upper half goes; the thread that copied
  // it unpacks it, so it reads the chunk before it writes over it, and
  // xs[place(c)] holds nothing yet.
  static __device__ void stage_f32(float4 *xs, const bf16 *act, int nch, int lo) {
    stage_copy(xs, act, nch, lo, 0, nch);
    cp_async_wait_pending(0);
    stage_unpack(xs, nch, lo, 0, nch);
    __syncthreads();
  }
  static __device__ __forceinline__ int place(int c, int nch, int lo) {
    return c < lo ? nch - lo + c : c - lo;
  }
  // act's chunks c0 .. c1 - 1 of stage_f32's copies, as one group of
  // cp.async; then (once the thread's group is in) its unpacking, which the
  // thread that copied a chunk does.
  static __device__ void stage_copy(float4 *xs, const bf16 *act, int nch, int lo, int c0, int c1) {
    const uint4 *src = reinterpret_cast<const uint4 *>(act);
    for (int c = c0 + (int)threadIdx.x; c < c1; c += THREADS)
      cp_async16(xs + nch + place(c, nch, lo), src + c); // another kernel wrote them: through the L2
    cp_async_commit();
  }
  static __device__ void stage_unpack(float4 *xs, int nch, int lo, int c0, int c1) {
    for (int c = c0 + (int)threadIdx.x; c < c1; c += THREADS) {
      const int p = place(c, nch, lo);
      float f[8];
      unpack8(*reinterpret_cast<const uint4 *>(xs + nch + p), f);
      xs[p] = make_float4(f[0], f[1], f[2], f[3]);
      xs[nch + p] = make_float4(f[4], f[5], f[6], f[7]);
    }
  }
  // PF > 0: after its wait, a lane asks the L2 for its next PF chunks of
  // weights (past the DU in registers) while the activations come (the
  // bench's measure too; slower in the model: BENCHMARKS.md, run AX).
  template <DownStage ST = DownStage::Whole, int PF = 0>
  static __device__ void down(const bf16 *w, const bf16 *w_shared, const bf16 *act,
                              const uint32_t *ids, const float *weights, bf16 *x, int fe, int fs,
                              int topk, int n, int m) {
    // Segment s of a warp's stream ends at its chunk seg_end[warp][s]
    // (s = topk + 1: past the stream, never); chunk c of it is 16 bytes at
    // seg_base[warp][s] + 16 c (the row's address less its segment's
    // start).  Here, not in down_rows, so that its two forms share them.
    __shared__ float part[WARPS][MOE_MAX_TOPK + 1][32];
    __shared__ unsigned long long seg_base[WARPS][MOE_MAX_TOPK + 2];
    __shared__ int seg_end[WARPS][MOE_MAX_TOPK + 2];
    const int nsh = fs >> 3, nfe = fe >> 3;
    // A step of 32 chunks crosses at most one segment's end where every
    // segment but the first is 32 chunks or longer (DeepSeek-V2-Lite's 176):
    // then each position moves on by an `if` the compiler predicates, not
    // a loop.
    if (topk == 0 || nfe >= 32)
      down_rows<ST, PF, true>(w, w_shared, act, ids, weights, x, fe, fs, topk, n, m, nsh, nfe, part,
                               seg_base, seg_end);
    else
      down_rows<ST, PF, false>(w, w_shared, act, ids, weights, x, fe, fs, topk, n, m, nsh, nfe, part,
                                seg_base, seg_end);
  }
  template <DownStage ST, int PF, bool ONE>
  static __device__ __forceinline__ void down_rows(const bf16 *w, const bf16 *w_shared,
                                                   const bf16 *act, const uint32_t *ids,
                                                   const float *weights, bf16 *x, int fe, int fs,
                                                   int topk, int n, int m, int nsh, int nfe,
                                                   float (*part)[MOE_MAX_TOPK + 1][32],
                                                   unsigned long long (*seg_base)[MOE_MAX_TOPK + 2],
                                                   int (*seg_end)[MOE_MAX_TOPK + 2]) {
    extern __shared__ __align__(16) unsigned char llm_smem[];
    float4 *xs = reinterpret_cast<float4 *>(llm_smem); // the stream's chunk c in f32 at xs[c], xs[nch + c]
    // Block (x, y) takes token L % gridDim.y and row block L / gridDim.y of
    // L = y * gridDim.x + x: the tokens' blocks of a row block are adjacent,
    // so that they read the shared experts' rows, and the rows of an expert
    // that several of them chose, at about the same time, all but the first
    // from the L2.
    const unsigned lin = blockIdx.y * gridDim.x + blockIdx.x;
    const int t = (int)(lin % gridDim.y), b0 = (int)(lin / gridDim.y);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (topk > MOE_MAX_TOPK)
      __trap();
    const int act_token = topk * fe + fs;
    const bool fast = (fe & 7) == 0 && (fs & 7) == 0;
    if (t >= m || !fast) { // the launch rules ask for fe and fs multiples of 8
      wait();
      trigger();
      if (t < m)
        __trap();
      return;
    }
    require_smem((size_t)act_token * 4);
    const int nch = act_token >> 3;
    const int lo = topk * nfe; // act's chunks: the experts' [0, lo), the shared experts' [lo, nch)
    const uint32_t xs_lo = (uint32_t)__cvta_generic_to_shared(xs), xs_hi = xs_lo + 16u * nch;
    // Lane s in 1..topk holds segment s's expert id and routing weight, read
    // before the wait; and lane 0 of each warp its output's residual (the
    // router wrote the first, o_proj before it the residual: both complete
    // before gate_up lets this kernel start), so that a block's last step
    // waits on no load.
    const uint32_t eid =
        lane >= 1 && lane <= topk ? __ldcg(ids + (size_t)t * topk + lane - 1) : 0u;
    const float gate =
        lane >= 1 && lane <= topk ? __ldcg(weights + (size_t)t * topk + lane - 1) : 0.0f;
    if (lane <= topk + 1)
      seg_end[warp][lane] = lane <= topk ? nsh + lane * nfe : 0x7fffffff;
    const int nsteps = (nch + 31) >> 5, nfull = nch >> 5;
    for (int b = b0, first = 1; first || b * WARPS < n; b += gridDim.x, first = 0) {
      const int d = b * WARPS + warp;
      const size_t dd = d < n ? (size_t)d : 0; // a warp past n reads row 0 and writes nothing
      const float res = lane == 0 ? bf(__ldcg(x + (size_t)t * n + dd)) : 0.0f;
      __syncwarp(); // the warp is done with the rows of its pass before
      if (lane <= topk + 1)
        seg_base[warp][lane] =
            lane == 0      ? reinterpret_cast<unsigned long long>(w_shared + dd * fs)
            : lane <= topk ? reinterpret_cast<unsigned long long>(w + ((size_t)eid * n + dd) * fe) -
                                 16ull * (unsigned)(nsh + (lane - 1) * nfe)
                           : 0ull;
      __syncwarp();
      // The fetch position: chunk f_j of the stream, in segment f_seg.
      int f_j = lane, f_seg = 0, f_end = seg_end[warp][0];
      unsigned long long f_base = seg_base[warp][0];
      // A fetch position (this one, or PF's ahead of it) into its next
      // segment.
      auto enter_next = [&](int &seg, int &end, unsigned long long &base) {
        seg++;
        end = seg_end[warp][seg];
        base = seg_base[warp][seg];
      };
      auto f_settle = [&] {
        if (ONE) {
          if (f_j >= f_end)
            enter_next(f_seg, f_end, f_base);
        } else {
          while (f_j >= f_end)
            enter_next(f_seg, f_end, f_base);
        }
      };
      f_settle();
      auto fetch = [&](uint4 &dst) {
        if (f_j < nch)
          dst = load_weight(reinterpret_cast<const bf16 *>(f_base + 16ull * (unsigned)f_j));
        f_j += 32;
        f_settle();
      };
      uint4 buf[DU];
#pragma unroll
      for (int u = 0; u < DU; u++)
        fetch(buf[u]);
      bool rest = !(ST == DownStage::Split && first); // the routed experts' staged (Split)
      if (first) {
        const bf16 *at = act + (size_t)t * act_token;
        if (ST == DownStage::Early) {
          stage_f32(xs, at, nch, lo);
          wait();
        } else {
          wait();
          if (ST == DownStage::TriggerFirst)
            trigger();
          if (PF) { // the lane's next PF chunks asked of the L2 while the activations come
            int p_j = f_j, p_seg = f_seg, p_end = f_end;
            unsigned long long p_base = f_base;
#pragma unroll
            for (int i = 0; i < PF; i++) {
              if (p_j < nch)
                prefetch_l2(reinterpret_cast<const bf16 *>(p_base + 16ull * (unsigned)p_j));
              p_j += 32;
              while (p_j >= p_end)
                enter_next(p_seg, p_end, p_base);
            }
          }
          if (ST == DownStage::Split) { // the shared experts' (read first), then the rest
            stage_copy(xs, at, nch, lo, lo, nch);
            stage_copy(xs, at, nch, lo, 0, lo);
            cp_async_wait_pending(1);
            stage_unpack(xs, nch, lo, lo, nch);
            __syncthreads();
          } else {
            stage_f32(xs, at, nch, lo);
          }
        }
        if (ST != DownStage::TriggerFirst)
          trigger();
      }
      // The consumption position: chunk c_j of the stream, in segment
      // c_seg.  A segment's sum goes to part as the position leaves it.
      int c_j = lane, c_seg = 0, c_end = seg_end[warp][0];
      float sum = 0;
      auto c_settle = [&] {
        if (ONE) {
          if (c_j >= c_end) {
            part[warp][c_seg][lane] = sum;
            sum = 0;
            c_seg++;
            c_end = seg_end[warp][c_seg];
          }
        } else {
          while (c_j >= c_end) {
            part[warp][c_seg][lane] = sum;
            sum = 0;
            c_seg++;
            c_end = seg_end[warp][c_seg];
          }
        }
      };
      c_settle();
      auto staged = [&](int s) {
        if (ST == DownStage::Split && !rest && 32 * s + 31 >= nsh) {
          // A lane of the block is about to leave the first segment (the
          // same step for every warp: their streams are as long).
          cp_async_wait_pending(0);
          stage_unpack(xs, nch, lo, 0, lo);
          __syncthreads();
          rest = true;
        }
      };
      // Steps in which every lane has a chunk, DU at a time; then the last
      // ones, whose chunks are all in registers (nothing left to fetch).
      int s0 = 0;
      for (; s0 + DU <= nfull; s0 += DU) {
#pragma unroll
        for (int u = 0; u < DU; u++) {
          staged(s0 + u);
          sum = dot8s(buf[u], xs_lo + 16u * c_j, xs_hi + 16u * c_j, sum);
          fetch(buf[u]);
          c_j += 32;
          c_settle();
        }
      }
#pragma unroll
      for (int u = 0; u < DU; u++) {
        if (s0 + u < nsteps) {
          staged(s0 + u);
          if (c_j < nch)
            sum = dot8s(buf[u], xs_lo + 16u * c_j, xs_hi + 16u * c_j, sum);
          c_j += 32;
          c_settle();
        }
      }
      __syncwarp();
      float routed = 0;
#pragma unroll
      for (int s = 1; s <= MOE_MAX_TOPK; s++)
        if (s <= topk)
          routed += __shfl_sync(0xffffffffu, gate, s) * round_bf(warp_sum(part[warp][s][lane]));
      const float shared = warp_sum(part[warp][0][lane]);
      if (d < n && lane == 0) {
        const float y = round_bf(round_bf(routed) + round_bf(shared));
        x[(size_t)t * n + d] = to_bf(res + y);
      }
    }
  }
};

} // namespace llm

#endif
