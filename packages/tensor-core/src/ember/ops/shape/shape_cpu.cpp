// Shape and view ops: view/reshape, permutations, expand, squeeze, slicing views, split
// family, cat/stack, flip, repeat, tril/triu.
//
// Views share the base's Storage (and with it the version counter) through make_view;
// sizes, strides and offsets are in elements, offsets absolute within the storage.
#include <algorithm>
#include <cstring>
#include <optional>

#include "ember/ops/shape/cat_meta.h"
#include "ember/backends/cpu/iter.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/ops/creation/creation_meta.h"

namespace ember::ops {
namespace {

// The most tensors an op returns in a list (each tensor takes a few hundred bytes: 2^28 of
// them exceed a large machine's memory).
constexpr int64_t kMaxTensorListLength = int64_t(1) << 28;

// A shape with one -1 resolved against numel (PyTorch's infer_size).
Shape infer_size(const char* op, const Shape& shape, int64_t numel) {
  Shape res = shape;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) throw std::runtime_error(message(op, ": only one dimension can be inferred"));
      infer = i;
    } else if (shape[i] >= 0) {
      if (__builtin_mul_overflow(known, shape[i], &known)) {
        throw std::runtime_error(message(op, ": shape '", shape_str(shape), "' is invalid for input of size ", numel));
      }
    } else {
      throw std::runtime_error(message(op, ": invalid shape dimension ", shape[i], " at index ", i, " of shape ",
                                       shape_str(shape)));
    }
  }
  if (numel == known || (infer && known > 0 && numel % known == 0)) {
    if (infer) {
      if (known == 0) {
        throw std::runtime_error(message(op, ": cannot reshape tensor of 0 elements into shape ", shape_str(shape),
                                         " because the unspecified dimension size -1 can be any value and is "
                                         "ambiguous"));
      }
      res[*infer] = numel / known;
    }
    return res;
  }
  throw std::runtime_error(message(op, ": shape '", shape_str(shape), "' is invalid for input of size ", numel));
}

// Strides that let a tensor of (sizes, strides) be viewed as new_sizes without a copy, or
// nullopt. The old dims are grouped into chunks that are contiguous with each other; every
// chunk must be covered exactly by a run of new dims (PyTorch's computeStride rule).
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides, const Shape& new_sizes) {
  const int64_t nnew = static_cast<int64_t>(new_sizes.size());
  if (sizes.empty()) return Shape(new_sizes.size(), 1);
  const int64_t numel = shape_numel(sizes);
  if (numel == 0) {
    if (sizes == new_sizes) return strides;
    return contiguous_strides(new_sizes);
  }
  Shape out(new_sizes.size());
  int64_t vd = nnew - 1;
  int64_t base = strides.back();  // stride of the innermost element of the current chunk
  int64_t chunk_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    chunk_numel *= sizes[d];
    const bool chunk_ends = d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != chunk_numel * base);
    if (!chunk_ends) continue;
    while (vd >= 0 && (view_numel < chunk_numel || new_sizes[vd] == 1)) {
      out[vd] = view_numel * base;
      view_numel *= new_sizes[vd];
      --vd;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      base = strides[d - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  if (vd != -1) return std::nullopt;
  return out;
}

Tensor alias(const Tensor& self) { return make_view(self, self->sizes(), self->strides(), self->offset()); }

// self (sizes, strides) -> a view with one dim removed.
Tensor drop_dim_view(const Tensor& self, int64_t dim, int64_t extra_offset) {
  Shape sz = self->sizes(), st = self->strides();
  sz.erase(sz.begin() + dim);
  st.erase(st.begin() + dim);
  return make_view(self, std::move(sz), std::move(st), self->offset() + extra_offset);
}

}  // namespace

// ------------------------------------------------------------------ view / reshape

Tensor view(const Tensor& self, const Shape& size) {
  Shape shape = infer_size("view", size, self->numel());
  auto st = view_strides(self->sizes(), self->strides(), shape);
  if (!st) {
    throw std::runtime_error(
        "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
        "two contiguous subspaces). Use .reshape(...) instead.");
  }
  return make_view(self, std::move(shape), std::move(*st), self->offset());
}

Tensor reshape(const Tensor& self, const Shape& shape_in) {
  Shape shape = infer_size("reshape", shape_in, self->numel());
  if (auto st = view_strides(self->sizes(), self->strides(), shape)) {
    return make_view(self, std::move(shape), std::move(*st), self->offset());
  }
  // a copy on self's device (reshape is generic: the CPU's copy_into would refuse a CUDA tensor)
  Tensor c = contiguous(self);
  return make_view(c, shape, contiguous_strides(shape), c->offset());
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  const int64_t nd = self->dim();
  const int64_t s = wrap_dim(start_dim, nd, "flatten"), e = wrap_dim(end_dim, nd, "flatten");
  if (s > e) throw std::runtime_error("flatten() has invalid args: start_dim cannot come after end_dim");
  if (nd == 0) return reshape(self, {1});
  if (s == e) return self;
  Shape shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(self->sizes()[d]);
  int64_t n = 1;
  for (int64_t d = s; d <= e; ++d) n *= self->sizes()[d];
  shape.push_back(n);
  for (int64_t d = e + 1; d < nd; ++d) shape.push_back(self->sizes()[d]);
  return reshape(self, shape);
}

Tensor unflatten(const Tensor& self, int64_t dim, const Shape& sizes) {
  if (sizes.empty()) throw std::runtime_error("unflatten: sizes must be non-empty");
  const int64_t d = wrap_dim(dim, self->dim(), "unflatten");
  if (self->dim() == 0) throw std::runtime_error("unflatten: Dimension specified as 0 but tensor has no dimensions");
  const int64_t dsize = self->sizes()[d];
  Shape resolved;
  try {
    resolved = infer_size("unflatten", sizes, dsize);
  } catch (const std::runtime_error&) {
    int infer = 0;
    for (int64_t s : sizes) infer += s == -1;
    if (infer > 1) throw std::runtime_error("unflatten: only one dimension can be inferred");
    throw std::runtime_error(message("unflatten: Provided sizes ", shape_str(sizes),
                                     " don't multiply up to the size of dim ", dim, " (", dsize,
                                     ") in the input tensor"));
  }
  Shape sz = self->sizes(), st = self->strides();
  const int64_t base_stride = st[d];
  Shape new_st(resolved.size());
  int64_t acc = base_stride;
  for (int64_t i = static_cast<int64_t>(resolved.size()) - 1; i >= 0; --i) {
    new_st[i] = acc;
    acc *= std::max<int64_t>(resolved[i], 1);
  }
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  sz.insert(sz.begin() + d, resolved.begin(), resolved.end());
  st.insert(st.begin() + d, new_st.begin(), new_st.end());
  return make_view(self, std::move(sz), std::move(st), self->offset());
}

// ------------------------------------------------------------------ permutations

Tensor permute(const Tensor& self, const Shape& dims) {
  const int64_t nd = self->dim();
  if (static_cast<int64_t>(dims.size()) != nd) {
    throw std::runtime_error(message("permute(): number of dimensions in the tensor input does not match the "
                                     "length of the desired ordering of dimensions i.e. input.dim() = ",
                                     nd, " is not equal to len(dims) = ", dims.size()));
  }
  Shape sz(nd), st(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t d = wrap_dim(dims[i], nd, "permute");
    if (seen[d]) throw std::runtime_error("permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sz[i] = self->sizes()[d];
    st[i] = self->strides()[d];
  }
  return make_view(self, std::move(sz), std::move(st), self->offset());
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  const int64_t nd = self->dim();
  const int64_t a = wrap_dim(dim0, nd, "transpose"), b = wrap_dim(dim1, nd, "transpose");
  if (nd == 0) return alias(self);
  Shape sz = self->sizes(), st = self->strides();
  std::swap(sz[a], sz[b]);
  std::swap(st[a], st[b]);
  return make_view(self, std::move(sz), std::move(st), self->offset());
}

Tensor t(const Tensor& self) {
  if (self->dim() > 2) {
    throw std::runtime_error(message("t() expects a tensor with <= 2 dimensions, but self is ", self->dim(), "D"));
  }
  if (self->dim() < 2) return alias(self);
  return transpose(self, 0, 1);
}

// ------------------------------------------------------------------ expand / squeeze

Tensor expand(const Tensor& self, const Shape& size) {
  const int64_t nd = self->dim(), n = static_cast<int64_t>(size.size());
  if (n < nd) {
    throw std::runtime_error(message("expand(", dtype_name(self->dtype()), " tensor of shape ",
                                     shape_str(self->sizes()), ", size=", shape_str(size),
                                     "): the number of sizes provided (", n,
                                     ") must be greater or equal to the number of dimensions in the tensor (",
                                     nd, ")"));
  }
  Shape sz(n), st(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t d = i - (n - nd);
    int64_t target = size[i];
    if (d < 0) {
      if (target < 0) {
        throw std::runtime_error(message("expand: The expanded size of the tensor (", target,
                                         ") isn't allowed in a leading, non-existing dimension ", i));
      }
      sz[i] = target;
      // a new size-1 dim gets the stride it would have in a contiguous layout (all 0 for 0-d)
      st[i] = sz[i] == 1 && nd > 0 ? sz[i + 1] * st[i + 1] : 0;
      continue;
    }
    const int64_t cur = self->sizes()[d];
    if (target == -1) target = cur;
    if (cur == target) {
      sz[i] = cur;
      st[i] = self->strides()[d];
    } else if (cur == 1 && target >= 0) {
      sz[i] = target;
      st[i] = 0;
    } else {
      throw std::runtime_error(message("expand: The expanded size of the tensor (", target,
                                       ") must match the existing size (", cur, ") at non-singleton dimension ",
                                       i, ".  Target sizes: ", shape_str(size),
                                       ".  Tensor sizes: ", shape_str(self->sizes())));
    }
  }
  return make_view(self, std::move(sz), std::move(st), self->offset());
}

Tensor expand_as(const Tensor& self, const Tensor& other) { return expand(self, other->sizes()); }

Tensor squeeze(const Tensor& self, const std::optional<Shape>& dim) {
  const int64_t nd = self->dim();
  std::vector<bool> drop(nd, false);
  if (!dim) {
    for (int64_t d = 0; d < nd; ++d) drop[d] = self->sizes()[d] == 1;
  } else {
    std::vector<bool> seen(std::max<int64_t>(nd, 1), false);
    for (int64_t x : *dim) {
      const int64_t d = wrap_dim(x, nd, "squeeze");
      if (seen[d]) throw std::runtime_error(message("squeeze: dim ", d, " appears multiple times in the list of dims"));
      seen[d] = true;
      if (nd > 0 && self->sizes()[d] == 1) drop[d] = true;
    }
  }
  Shape sz, st;
  for (int64_t d = 0; d < nd; ++d) {
    if (drop[d]) continue;
    sz.push_back(self->sizes()[d]);
    st.push_back(self->strides()[d]);
  }
  return make_view(self, std::move(sz), std::move(st), self->offset());
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  const int64_t nd = self->dim();
  const int64_t d = wrap_dim(dim, nd + 1, "unsqueeze");
  Shape sz = self->sizes(), st = self->strides();
  const int64_t stride = d < nd ? sz[d] * st[d] : 1;
  sz.insert(sz.begin() + d, 1);
  st.insert(st.begin() + d, stride);
  return make_view(self, std::move(sz), std::move(st), self->offset());
}

// ------------------------------------------------------------------ slicing views

Tensor as_strided(const Tensor& self, const Shape& size, const Shape& stride, std::optional<int64_t> storage_offset) {
  if (size.size() != stride.size()) {
    throw std::runtime_error(message("as_strided: mismatch in length of strides and shape (", size.size(), " sizes, ",
                                     stride.size(), " strides)"));
  }
  const int64_t offset = storage_offset.value_or(self->offset());
  if (offset < 0) throw std::runtime_error(message("as_strided: negative storage offset ", offset));
  bool empty = false;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0) throw std::runtime_error(message("as_strided: negative size ", size[i], " at dim ", i));
    if (stride[i] < 0) throw std::runtime_error(message("as_strided: negative stride ", stride[i], " at dim ", i));
    if (size[i] == 0) empty = true;
  }
  // the highest element index the view touches (none when a dim is empty), checked for
  // overflow: a wrapped sum would pass the bounds check below and read past the storage
  int64_t last = empty ? -1 : offset;
  for (size_t i = 0; i < size.size() && !empty; ++i) {
    int64_t span = 0;
    if (__builtin_mul_overflow(size[i] - 1, stride[i], &span) || __builtin_add_overflow(last, span, &last)) {
      throw std::runtime_error(message("as_strided: Storage size calculation overflowed with sizes=",
                                       shape_str(size), " and strides=", shape_str(stride)));
    }
  }
  const int64_t available = static_cast<int64_t>(self->storage()->nbytes() / self->itemsize());
  if (last >= available) {
    throw std::runtime_error(message("as_strided: setStorage: sizes ", shape_str(size), ", strides ", shape_str(stride),
                                     " and storage offset ", offset, " need ", last + 1,
                                     " elements, but the storage holds only ", available));
  }
  return make_view(self, size, stride, offset);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  if (self->dim() == 0) throw std::runtime_error("narrow() cannot be applied to a 0-dim tensor.");
  if (length < 0) throw std::runtime_error("narrow(): length must be non-negative.");
  const int64_t d = wrap_dim(dim, self->dim(), "narrow");
  const int64_t size = self->sizes()[d];
  if (start < -size || start > size) {
    throw IndexError(message("narrow(): start out of range (expected to be in range of [", -size, ", ", size,
                             "], but got ", start, ")"));
  }
  if (start < 0) start += size;
  if (length > size - start) {  // (start + length could overflow int64)
    throw std::runtime_error(message("narrow(): start (", start, ") + length (", length, ") exceeds dimension size (", size,
                                     ")."));
  }
  Shape sz = self->sizes();
  sz[d] = length;
  return make_view(self, std::move(sz), self->strides(), self->offset() + start * self->strides()[d]);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  if (self->dim() == 0) throw IndexError("select() cannot be applied to a 0-dim tensor.");
  const int64_t d = wrap_dim(dim, self->dim(), "select");
  const int64_t size = self->sizes()[d];
  if (index < -size || index >= size) {
    throw IndexError(message("select(): index ", index, " out of range for tensor of size ",
                             shape_str(self->sizes()), " at dimension ", d));
  }
  if (index < 0) index += size;
  return drop_dim_view(self, d, index * self->strides()[d]);
}

std::vector<Tensor> split_sections(const Tensor& self, const Shape& split_size, int64_t dim) {
  if (self->dim() == 0) throw std::runtime_error("split expects at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, self->dim(), "split");
  const int64_t size = self->sizes()[d];
  int64_t total = 0;
  for (int64_t s : split_size) {
    if (s < 0) {
      throw std::runtime_error(message("split_with_sizes expects split_sizes have only non-negative entries, "
                                       "but got split_sizes=", shape_str(split_size)));
    }
    total += s;
  }
  if (total != size) {
    throw std::runtime_error(message("split_with_sizes expects split_sizes to sum exactly to ", size,
                                     " (input tensor's size at dimension ", d, "), but got split_sizes=",
                                     shape_str(split_size)));
  }
  std::vector<Tensor> parts;
  parts.reserve(split_size.size());
  int64_t start = 0;
  for (int64_t s : split_size) {
    Shape sz = self->sizes();
    sz[d] = s;
    parts.push_back(make_view(self, std::move(sz), self->strides(), self->offset() + start * self->strides()[d]));
    start += s;
  }
  return parts;
}

std::vector<Tensor> split_size(const Tensor& self, int64_t split_size, int64_t dim) {
  if (self->dim() == 0) throw std::runtime_error("split expects at least a 1-dimensional tensor");
  if (split_size < 0) {
    throw std::runtime_error(message("split expects split_size be non-negative, but got split_size=", split_size));
  }
  const int64_t d = wrap_dim(dim, self->dim(), "split");
  const int64_t size = self->sizes()[d];
  if (split_size == 0 && size != 0) {
    throw std::runtime_error(message("split_size can only be 0 if dimension size is 0, but got dimension size of ",
                                     size));
  }
  int64_t n = 1;
  if (split_size != 0) n = std::max<int64_t>(ceil_div(size, split_size), 1);
  Shape sizes(n, split_size);
  sizes[n - 1] = split_size - (split_size * n - size);
  return split_sections(self, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  if (self->dim() == 0) throw std::runtime_error("chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) throw std::runtime_error(message("chunk expects `chunks` to be greater than 0, got: ", chunks));
  const int64_t d = wrap_dim(dim, self->dim(), "chunk");
  const int64_t size = self->sizes()[d];
  const int64_t each = ceil_div(size, chunks);
  if (each == 0 && size == 0) {
    // PyTorch's `chunks` empty tensors; a count no list of tensors could hold is refused
    // before its sizes are allocated
    if (chunks > kMaxTensorListLength) {
      throw std::runtime_error(message("chunk: ", chunks, " chunks of an empty dimension would be ", chunks,
                                       " tensors, more than fit in memory"));
    }
    return split_sections(self, Shape(chunks, 0), d);
  }
  return split_size(self, each, d);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  if (self->dim() == 0) throw IndexError("unbind: Dimension specified as 0 but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, self->dim(), "unbind");
  std::vector<Tensor> parts;
  parts.reserve(self->sizes()[d]);
  for (int64_t i = 0; i < self->sizes()[d]; ++i) parts.push_back(drop_dim_view(self, d, i * self->strides()[d]));
  return parts;
}

Tensor reversed_view(const Tensor& self, const Shape& dims) {
  const int64_t nd = self->dim();
  std::vector<bool> flipped(std::max<int64_t>(nd, 1), false);
  for (int64_t x : dims) {
    const int64_t d = wrap_dim(x, nd, "flip");
    if (flipped[d]) throw std::runtime_error(message("flip: dim ", d, " appears multiple times in the list of dims"));
    flipped[d] = true;
  }
  if (self->numel() == 0) return self;
  Shape st = self->strides();
  int64_t offset = self->offset();
  for (int64_t d = 0; d < nd; ++d) {
    if (!flipped[d]) continue;
    offset += (self->sizes()[d] - 1) * st[d];
    st[d] = -st[d];
  }
  return make_view(self, self->sizes(), std::move(st), offset);
}

// ------------------------------------------------------------------ stack, repeat (copies
// through views, on any device)

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  if (tensors.empty()) throw std::runtime_error("stack expects a non-empty TensorList");
  const int64_t d = wrap_dim(dim, tensors[0]->dim() + 1, "stack");
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i]->sizes() != tensors[0]->sizes()) {
      throw std::runtime_error(message("stack expects each tensor to be equal size, but got ",
                                       shape_str(tensors[0]->sizes()), " at entry 0 and ",
                                       shape_str(tensors[i]->sizes()), " at entry ", i));
    }
  }
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, d));
  return cat(parts, d, out);
}

Tensor repeat(const Tensor& self, const Shape& repeats) {
  const int64_t nd = self->dim(), n = static_cast<int64_t>(repeats.size());
  if (n < nd) {
    throw std::runtime_error(
        "repeat: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  }
  Shape in_sz(n, 1), in_st(n, 0), shape(n);
  for (int64_t d = 0; d < nd; ++d) {
    in_sz[n - nd + d] = self->sizes()[d];
    in_st[n - nd + d] = self->strides()[d];
  }
  for (int64_t i = 0; i < n; ++i) {
    if (__builtin_mul_overflow(in_sz[i], repeats[i], &shape[i])) {
      throw std::runtime_error(message("repeat: the size of dimension ", i, ", ", in_sz[i], " * ", repeats[i],
                                       ", overflows int64"));
    }
  }
  for (int64_t r : repeats) {
    if (r < 0) {
      throw std::runtime_error(message("repeat: Trying to create tensor with negative dimension ",
                                       *std::min_element(shape.begin(), shape.end()), ": ", shape_str(shape)));
    }
  }
  Tensor out = ember::empty(shape, self->dtype(), self->device());
  if (out->numel() == 0) return out;
  // out viewed as [r0, s0, r1, s1, ...]; self broadcast along the r dims
  Shape dsz, dst, ssz, sst;
  const Shape& ost = out->strides();
  for (int64_t i = 0; i < n; ++i) {
    dsz.push_back(repeats[i]);
    dst.push_back(in_sz[i] * ost[i]);
    dsz.push_back(in_sz[i]);
    dst.push_back(ost[i]);
    sst.push_back(0);
    sst.push_back(in_st[i]);
  }
  Tensor tiles = make_view(out, dsz, std::move(dst), 0);
  copy(tiles, make_view(self, dsz, std::move(sst), self->offset()), false, tiles);
  return out;
}

}  // namespace ember::ops

// ---- kernels

namespace ember::cpu {

// ------------------------------------------------------------------ cat / stack

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  for (const Tensor& t : tensors) check_cpu(t, "cat");
  if (out) check_cpu(out, "cat");
  const CatMeta m = cat_meta(tensors, dim, out);
  const int64_t d = m.dim;
  const Shape& shape = m.shape;
  const ScalarType dtype = m.dtype;
  // write straight into out when it fits and does not alias an input
  Tensor res = cat_result(tensors, out, m, Device{});
  // outer blocks (dims before d) of each input land at a fixed stride in res
  const int64_t outer = shape_numel(Shape(shape.begin(), shape.begin() + d));
  const int64_t res_block = outer == 0 ? 0 : shape_numel(shape) / std::max<int64_t>(outer, 1);
  int64_t offset = 0;
  for (const Tensor* tp : m.used) {
    const Tensor& t = *tp;
    const int64_t len = t->sizes()[d];
    if (len == 0) continue;
    if (res->is_contiguous() && t->is_contiguous() && t->dtype() == dtype && t->numel() > 0) {
      // same dtype, both contiguous: one memcpy per outer block
      const int64_t block = t->numel() / outer;
      const size_t isz = res->itemsize();
      char* dst = res->data_ptr() + offset * (res_block / shape[d]) * static_cast<int64_t>(isz);
      const char* src = t->data_ptr();
      auto copy_blocks = [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          std::memcpy(dst + b * res_block * static_cast<int64_t>(isz), src + b * block * static_cast<int64_t>(isz),
                      static_cast<size_t>(block) * isz);
        }
      };
      if (t->numel() < kParallelGrain || outer == 1) copy_blocks(0, outer);
      else parallel_for(0, outer, std::max<int64_t>(1, kParallelGrain / block), copy_blocks);
      offset += len;
      continue;
    }
    Shape sz = res->sizes();
    sz[d] = len;
    Tensor slot = make_view(res, std::move(sz), res->strides(), res->offset() + offset * res->strides()[d]);
    copy_into(slot, t);
    offset += len;
  }
  return finish_out("cat", out, res);
}

// ------------------------------------------------------------------ copies: flip, repeat

Tensor flip(const Tensor& self, const Shape& dims) {
  const Tensor src = ops::reversed_view(self, dims);
  Tensor out = ember::empty(self->sizes(), self->dtype());
  if (self->numel() == 0) return out;
  auto L = make_loop<2>(out->sizes(), {out.get(), src.get()});
  dispatch_itemsize(out->itemsize(), [&](auto tag) {
    using U = decltype(tag);
    for_each_strided<2>(L, [](char** p, const int64_t* s, int64_t n) {
      U* o = reinterpret_cast<U*>(p[0]);
      if (s[0] == sizeof(U) && s[1] == -static_cast<int64_t>(sizeof(U))) {  // a reversed row
        const U* in = reinterpret_cast<const U*>(p[1]) - (n - 1);
        for (int64_t i = 0; i < n; ++i) o[i] = in[n - 1 - i];
      } else if (s[0] == sizeof(U) && s[1] == sizeof(U)) {
        std::memcpy(o, p[1], static_cast<size_t>(n) * sizeof(U));
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<U*>(p[0] + i * s[0]) = *reinterpret_cast<const U*>(p[1] + i * s[1]);
      }
    });
  });
  return out;
}

// ------------------------------------------------------------------ tril / triu

namespace {

// Zeroes the entries of res (any strides) on the wrong side of the diagonal: above it when
// lower, below it otherwise. Every dtype's zero is all-bits-zero.
void zero_triangle(const Tensor& res, int64_t diagonal, bool lower) {
  const int64_t nd = res->dim();
  const int64_t rows = res->sizes()[nd - 2], cols = res->sizes()[nd - 1];
  if (res->numel() == 0) return;
  const int64_t rs = res->strides()[nd - 2], cs = res->strides()[nd - 1];
  const size_t isz = res->itemsize();
  Shape bsz(res->sizes().begin(), res->sizes().end() - 2);
  Shape bst(res->strides().begin(), res->strides().end() - 2);
  const int64_t batches = shape_numel(bsz);
  char* base = res->data_ptr();
  auto work = [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t b = task / rows, i = task % rows;
      int64_t off = 0;
      for (int64_t k = static_cast<int64_t>(bsz.size()) - 1; k >= 0; --k) {
        off += (b % bsz[k]) * bst[k];
        b /= bsz[k];
      }
      off += i * rs;
      int64_t j0, j1;  // the zeroed column range [j0, j1)
      if (lower) {
        j0 = std::clamp<int64_t>(i + diagonal + 1, 0, cols);
        j1 = cols;
      } else {
        j0 = 0;
        j1 = std::clamp<int64_t>(i + diagonal, 0, cols);
      }
      if (j0 >= j1) continue;
      char* p = base + (off + j0 * cs) * static_cast<int64_t>(isz);
      if (cs == 1) {
        std::memset(p, 0, static_cast<size_t>(j1 - j0) * isz);
      } else {
        for (int64_t j = j0; j < j1; ++j) std::memset(p + (j - j0) * cs * static_cast<int64_t>(isz), 0, isz);
      }
    }
  };
  const int64_t tasks = batches * rows;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1));
  if (tasks * cols < kParallelGrain) work(0, tasks);
  else parallel_for(0, tasks, grain, work);
}

Tensor triangle(const char* op, const Tensor& self, int64_t diagonal_in, const Tensor& out, bool lower) {
  const int64_t diagonal = triangle_meta(op, self, out, diagonal_in);
  if (out == self) {
    zero_triangle(self, diagonal, lower);
    return self;
  }
  Tensor res = prepare_out(op, out, self->sizes(), self->dtype());
  if (res->storage() == self->storage() && res != self) res = ember::empty(self->sizes(), self->dtype());
  copy_into(res, self);
  zero_triangle(res, diagonal, lower);
  return finish_out(op, out, res);
}

}  // namespace

Tensor tril(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle("tril", self, diagonal, out, true);
}

Tensor triu(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle("triu", self, diagonal, out, false);
}

}  // namespace ember::cpu
