// CUDA kernels of nonzero and masked_select: results whose length depends on the data. The
// checks and the broadcast shape of masked_select are masked_select_meta (index_put_meta.h),
// which index_cpu.cpp's CPU kernel calls too.
//
// Both are a compaction of the positions 0 .. n-1 (row-major) where a predicate holds: chunks
// of 4096 positions are counted, the counts scanned into each chunk's first output slot, the
// total read back (the one wait for the device: the result's shape depends on it), then each
// chunk numbers its selected positions in order with block scans and writes them. The order
// is the CPU's.
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/index/index_meta.h"  // out_or_fresh
#include "ember/ops/index/index_put_meta.h"

namespace ember::cuda_engine {
namespace {

constexpr int kScanThreads = 256;
constexpr int kScanRounds = 16;
constexpr int64_t kChunk = static_cast<int64_t>(kScanThreads) * kScanRounds;
constexpr int kMaxNonzeroDims = 25;

// The exclusive prefix sum of v over the block (blockDim.x a multiple of 32); *total gets the
// block's sum. sh: 32 slots. Every thread of the block must call it.
template <typename T> __device__ T block_exclusive_scan(T v, T* sh, T* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  T x = v;
  for (int o = 1; o < 32; o <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) sh[warp] = x;
  __syncthreads();
  if (warp == 0) {
    T w = lane < nw ? sh[lane] : T(0);
    for (int o = 1; o < 32; o <<= 1) {
      const T y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    sh[lane] = w;
  }
  __syncthreads();
  const T prefix = warp > 0 ? sh[warp - 1] : T(0);
  *total = sh[nw - 1];
  __syncthreads();
  return prefix + x - v;
}

// counts[c] = how many positions of chunk c satisfy pred.
template <typename Pred> __global__ void count_chunks_kernel(int64_t n, int64_t nchunks, Pred pred, int64_t* counts) {
  __shared__ int64_t sh[32];
  for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
    int64_t cnt = 0;
    const int64_t end = min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk + threadIdx.x; i < end; i += blockDim.x) cnt += pred(i) ? 1 : 0;
    int64_t total;
    block_exclusive_scan(cnt, sh, &total);
    if (threadIdx.x == 0) counts[c] = total;
  }
}

// counts[0 .. nchunks) replaced by their exclusive prefix sums, counts[nchunks] = the total.
// One block.
__global__ void scan_counts_kernel(int64_t* counts, int64_t nchunks) {
  __shared__ int64_t sh[32];
  int64_t carry = 0;
  for (int64_t b = 0; b < nchunks; b += blockDim.x) {
    const int64_t i = b + threadIdx.x;
    const int64_t v = i < nchunks ? counts[i] : 0;
    int64_t total;
    const int64_t ex = block_exclusive_scan(v, sh, &total);
    if (i < nchunks) counts[i] = carry + ex;
    carry += total;
  }
  if (threadIdx.x == 0) counts[nchunks] = carry;
}

// write(i, slot) for every position i satisfying pred, slot = how many such positions precede i.
template <typename Pred, typename Write>
__global__ void compact_write_kernel(int64_t n, int64_t nchunks, Pred pred, Write write, const int64_t* starts) {
  __shared__ int sh[32];
  for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
    int64_t base = starts[c];
    for (int r = 0; r < kScanRounds; ++r) {
      const int64_t i = c * kChunk + static_cast<int64_t>(r) * blockDim.x + threadIdx.x;
      const bool f = i < n && pred(i);
      int total;
      const int ex = block_exclusive_scan(f ? 1 : 0, sh, &total);
      if (f) write(i, base + ex);
      base += total;
    }
  }
}

struct Compaction {
  int64_t n = 0;        // positions
  int64_t nchunks = 0;
  int64_t count = 0;    // selected positions
  Tensor starts;        // each chunk's first slot (int64, nchunks + 1)
};

int compact_grid(int64_t nchunks) { return static_cast<int>(std::min<int64_t>(std::max<int64_t>(nchunks, 1), 65535)); }

// Counts the positions of [0, n) satisfying pred (waits for the device to read the count).
template <typename Pred> Compaction compact_count(const char* op, const Device& dev, int64_t n, Pred pred) {
  Compaction c;
  c.n = n;
  if (n == 0) return c;
  c.nchunks = (n + kChunk - 1) / kChunk;
  c.starts = ember::empty({c.nchunks + 1}, ScalarType::Int64, dev);
  int64_t* starts = reinterpret_cast<int64_t*>(c.starts->data_ptr());
  {
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    count_chunks_kernel<Pred><<<compact_grid(c.nchunks), kScanThreads, 0, stream>>>(n, c.nchunks, pred, starts);
    check_launch(op);
    scan_counts_kernel<<<1, 1024, 0, stream>>>(starts, c.nchunks);
    check_launch(op);
  }
  c.count = *to_host(make_view(c.starts, {}, {}, c.starts->offset() + c.nchunks))->data<int64_t>();
  return c;
}

// Calls write(i, slot) on the device for the positions counted by compact_count.
template <typename Pred, typename Write>
void compact_write(const char* op, const Device& dev, const Compaction& c, Pred pred, Write write) {
  if (c.count == 0) return;
  CurrentDevice guard(dev.index);
  compact_write_kernel<Pred, Write><<<compact_grid(c.nchunks), kScanThreads, 0, stream_of(dev)>>>(
      c.n, c.nchunks, pred, write, reinterpret_cast<const int64_t*>(c.starts->data_ptr()));
  check_launch(op);
}

// ---- nonzero

template <typename T> struct NonzeroPred {
  const T* p;
  __device__ bool operator()(int64_t i) const { return cvt<bool>(p[i]); }
};

// out[slot] = the coordinates of flat position i of a contiguous tensor of `sizes`.
struct CoordWriter {
  int nd;
  int64_t sizes[kMaxNonzeroDims];
  int64_t* out;
  __device__ void operator()(int64_t i, int64_t slot) const {
    int64_t* o = out + slot * nd;
    for (int d = nd - 1; d >= 0; --d) {
      o[d] = i % sizes[d];
      i /= sizes[d];
    }
  }
};

// ---- masked_select: operand 0 self, operand 1 the mask, over the broadcast shape

struct MaskPred {
  Strided<2> s;
  __device__ bool operator()(int64_t i) const {
    int64_t off[2];
    s.offsets(i, off);
    return *reinterpret_cast<const bool*>(s.base[1] + off[1]);
  }
};

template <typename U> struct SelectWriter {
  Strided<2> s;
  U* out;
  __device__ void operator()(int64_t i, int64_t slot) const {
    int64_t off[2];
    s.offsets(i, off);
    out[slot] = *reinterpret_cast<const U*>(s.base[0] + off[0]);
  }
};

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor nonzero(const Tensor& self) {
  const char* op = "nonzero";
  const Device dev = self->device();
  const int64_t nd = self->dim();
  if (nd > kMaxNonzeroDims) {
    throw NotImplementedError(message(op, ": cuda tensors with more than ", kMaxNonzeroDims, " dims are not supported"));
  }
  Tensor c = contiguous_in(self, self->dtype());
  Tensor out;
  dispatch_device_with_complex(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const NonzeroPred<T> pred{reinterpret_cast<const T*>(c->data_ptr())};
    const Compaction cc = compact_count(op, dev, c->numel(), pred);
    out = ember::empty({cc.count, nd}, ScalarType::Int64, dev);
    if (nd == 0) return;  // (0, 0) or (1, 0): nothing to write
    CoordWriter w{};
    w.nd = static_cast<int>(nd);
    for (int64_t d = 0; d < nd; ++d) w.sizes[d] = c->sizes()[static_cast<size_t>(d)];
    w.out = reinterpret_cast<int64_t*>(out->data_ptr());
    compact_write(op, dev, cc, pred, w);
  });
  return out;
}

Tensor masked_select(const Tensor& self, const Tensor& mask, const Tensor& out) {
  const char* op = "masked_select";
  const Shape b = masked_select_meta(self, mask, out);
  const Device dev = !is_on_cpu(self) ? self->device() : !is_on_cpu(mask) ? mask->device() : out->device();
  Tensor s = expand_to(to_device(self, dev), b, op);
  Tensor m = expand_to(to_device(mask, dev), b, op);
  const Strided<2> st = make_strided<2>(op, b, {s.get(), m.get()});
  const MaskPred pred{st};
  const Compaction cc = compact_count(op, dev, shape_numel(b), pred);
  const Tensor target = out && out->device() == dev ? out : Tensor();
  Tensor res = out_or_fresh(target, {cc.count}, self->dtype(), dev, {&self, &mask});
  dispatch_itemsize(res->itemsize(), [&](auto tag) {
    using U = decltype(tag);
    compact_write(op, dev, cc, pred, SelectWriter<U>{st, reinterpret_cast<U*>(res->data_ptr())});
  });
  return finish_out(op, out, res);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(nonzero);
EMBER_REGISTER_CUDA_KERNEL(masked_select);
