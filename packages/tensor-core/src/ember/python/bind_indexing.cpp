// Tensor.__getitem__ / __setitem__: the Python index expression parsed into basic indexing
// (a view: ints, slices, None, Ellipsis) followed, when present, by advanced indexing
// (integer and bool tensors, lists, NumPy arrays) through index_get / index_put on the CPU and
// ops::_index / ops::index_put on other devices.
//
// Semantics follow PyTorch: an int (or 0-d integer tensor) is a select, so it neither counts as
// nor separates advanced indices; a Python bool (or 0-d bool tensor) adds a dim indexed by
// [0] (True) or [] (False); masks become their nonzero() indices; only the first Ellipsis
// expands; slice steps must be positive.
//
// Devices: index tensors may live on the CPU or on the indexed tensor's device (CPU ones are
// moved there; a 0-d one is read as a number wherever it is); anywhere else is a RuntimeError.
// An assigned value on the CPU is copied over to the indexed tensor's device, a 0-d value of
// another device is brought to it; slice assignment copies any other value across devices,
// the other ops report the mixed devices. A CPU tensor with CPU values takes the CPU functions
// directly (no dispatch, no extra copies).
#include <cstring>

#include "ember/python/python_api.h"
#include "ember/ops/index/index_put_meta.h"
#include "ember/ops/index/indexing.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/profiler.h"

namespace ember {
namespace {

// One entry of an index expression after conversion.
struct Item {
  enum class Kind : int8_t { Int, Slice, None, Ellipsis, Bool, Tensor } kind = Kind::None;
  int64_t i = 0;       // Int
  bool b = false;      // Bool
  PyObject* slice = nullptr;  // Slice (borrowed from the key, which outlives the parse)
  Tensor t;            // Tensor: int32/int64 (any dim) or bool (ndim >= 1)
};

// Geometry of the view being built.
// A view being built by basic indexing. A slice with a negative step is kept as the
// positive-step slice over the same elements, its dim marked in `flipped`: the core has
// no negative strides, so getitem flips those dims of the result (a copy) and setitem
// flips the value instead.
struct View {
  Shape sizes, strides;
  int64_t offset;
  std::vector<char> flipped;

  explicit View(const Tensor& t)
      : sizes(t->sizes()), strides(t->strides()), offset(t->offset()), flipped(t->dim(), 0) {}
  Shape flip_dims() const {
    Shape dims;
    for (size_t d = 0; d < flipped.size(); ++d) {
      if (flipped[d]) dims.push_back(static_cast<int64_t>(d));
    }
    return dims;
  }
};

[[noreturn]] void invalid_index(PyObject* obj) {
  throw IndexError(message("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                           "valid indices (got ",
                           Py_TYPE(obj)->tp_name, ")"));
}

bool load_tensor(PyObject* obj, Tensor& out) {
  py::detail::make_caster<Tensor> tc;
  if (!tc.load(obj, false)) return false;
  out = py::detail::cast_op<Tensor>(tc);
  return true;
}

bool is_numpy_bool_scalar(PyObject* obj) {
  const char* tn = Py_TYPE(obj)->tp_name;
  return std::strcmp(tn, "numpy.bool") == 0 || std::strcmp(tn, "numpy.bool_") == 0;
}

bool on_cpu(const Tensor& t) { return t->device().type == DeviceType::CPU; }

bool same_device(const Device& a, const Device& b) {
  return a == b || (a.type == DeviceType::CPU && b.type == DeviceType::CPU);
}

// t in dtype, converted on t's device (t itself when it has it).
Tensor converted(const Tensor& t, ScalarType dtype) {
  if (t->dtype() == dtype) return t;
  if (on_cpu(t)) return to_dtype(t, dtype);
  Tensor r = ember::empty(t->sizes(), dtype, t->device());
  ops::copy(r, t, false, r);
  return r;
}

// A tensor used as an index of a tensor on dev: 0-d integer -> Int; 0-d bool/uint8 -> Bool
// (read wherever they are); uint8 -> bool mask; int32/int64/bool kept; other dtypes are an
// IndexError; tensors that are neither on the CPU nor on dev a RuntimeError.
Item tensor_item(const Tensor& t, const Device& dev) {
  Item it;
  const ScalarType dt = t->dtype();
  if (t->dim() == 0 && is_integral(dt, true)) {
    const Tensor h = to_host(t);
    if (dt == ScalarType::Bool || dt == ScalarType::UInt8) {
      it.kind = Item::Kind::Bool;
      it.b = dt == ScalarType::Bool ? *h->data<bool>() : *h->data<uint8_t>() != 0;
      return it;
    }
    it.kind = Item::Kind::Int;
    dispatch_integral(dt, "index", [&](auto tag) {
      using T = decltype(tag);
      it.i = static_cast<int64_t>(*h->data<T>());
    });
    return it;
  }
  it.kind = Item::Kind::Tensor;
  if (dt != ScalarType::UInt8 && dt != ScalarType::Int64 && dt != ScalarType::Int32 && dt != ScalarType::Bool) {
    throw IndexError("tensors used as indices must be long, int, byte or bool tensors");
  }
  if (!on_cpu(t) && !same_device(t->device(), dev)) {
    throw std::runtime_error(message("index: indices should be either on cpu or on the same device as the indexed "
                                     "tensor (", dev.str(), "), got an index on ", t->device().str()));
  }
  it.t = dt == ScalarType::UInt8 ? converted(t, ScalarType::Bool) : t;
  return it;
}

// A NumPy array used as an index: bool -> mask, any integer type -> int64 indices.
Item numpy_item(py::array arr, const Device& dev) {
  const char kind = arr.dtype().kind();
  if (kind == 'b') {
    if (arr.ndim() == 0) {
      Item it;
      it.kind = Item::Kind::Bool;
      it.b = PyObject_IsTrue(arr.ptr()) == 1;
      return it;
    }
    auto a = py::array::ensure(arr, py::array::c_style);
    Tensor src = from_numpy(a);
    Tensor t = ember::empty(src->sizes(), ScalarType::Bool);
    copy_into(t, src);  // own the memory: the array may change before the index is used
    return tensor_item(t, dev);
  }
  if (kind == 'i' || kind == 'u') {
    auto a = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(arr);
    if (!a) throw py::error_already_set();
    if (a.ndim() == 0) {
      Item it;
      it.kind = Item::Kind::Int;
      it.i = *a.data();
      return it;
    }
    Tensor src = from_numpy(a);
    Tensor t = ember::empty(src->sizes(), ScalarType::Int64);
    copy_into(t, src);
    return tensor_item(t, dev);
  }
  throw IndexError(message("arrays used as indices must be of integer (or boolean) type, got numpy.",
                           std::string(py::str(arr.dtype()))));
}

// A list used as one advanced index (nested numbers): bool values make a mask, anything else
// int64 indices (floats truncate, as PyTorch does); an empty list is an empty int64 index.
Item list_item(PyObject* obj, const Device& dev) {
  Tensor t;
  try {
    t = tensor_from_data(obj, std::nullopt);
  } catch (const std::exception&) {
    invalid_index(obj);
  }
  if (t->dtype() == ScalarType::Bool && t->dim() > 0) return tensor_item(t, dev);
  if (t->dtype() != ScalarType::Int64) t = to_dtype(t, ScalarType::Int64);
  return tensor_item(t, dev);
}

// Whether a non-tuple sequence is a (legacy) multi-dim index: it holds a slice, Ellipsis,
// None or a tensor, which a single index array cannot.
bool list_is_tuple(PyObject* obj) {
  const Py_ssize_t n = PyList_GET_SIZE(obj);
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* e = PyList_GET_ITEM(obj, k);
    if (PySlice_Check(e) || e == Py_Ellipsis || e == Py_None) return true;
    Tensor t;
    if (load_tensor(e, t) && t->dim() > 0) return true;
  }
  return false;
}

Item to_item(PyObject* obj, const Device& dev) {
  Item it;
  if (PyLong_CheckExact(obj)) {
    it.kind = Item::Kind::Int;
    it.i = PyLong_AsLongLong(obj);
    if (it.i == -1 && PyErr_Occurred()) throw py::error_already_set();
    return it;
  }
  if (PySlice_Check(obj)) {
    it.kind = Item::Kind::Slice;
    it.slice = obj;
    return it;
  }
  if (obj == Py_None) {
    it.kind = Item::Kind::None;
    return it;
  }
  if (obj == Py_Ellipsis) {
    it.kind = Item::Kind::Ellipsis;
    return it;
  }
  if (PyBool_Check(obj) || is_numpy_bool_scalar(obj)) {
    it.kind = Item::Kind::Bool;
    it.b = PyObject_IsTrue(obj) == 1;
    return it;
  }
  Tensor t;
  if (load_tensor(obj, t)) return tensor_item(t, dev);
  if (py::isinstance<py::array>(obj)) return numpy_item(py::reinterpret_borrow<py::array>(obj), dev);
  if (PyList_Check(obj)) return list_item(obj, dev);
  if (PyLong_Check(obj) || (PyIndex_Check(obj) && !PyFloat_Check(obj))) {  // int subclasses, numpy integers
    PyObject* v = PyNumber_Index(obj);
    if (!v) throw py::error_already_set();
    it.kind = Item::Kind::Int;
    it.i = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (it.i == -1 && PyErr_Occurred()) throw py::error_already_set();
    return it;
  }
  invalid_index(obj);
}

// The items of a key (indexing a tensor on dev): a tuple (or a legacy list of
// slices/None/...) is a multi-dim index.
void collect_items(PyObject* key, std::vector<Item>& items, const Device& dev) {
  if (PyTuple_Check(key)) {
    const Py_ssize_t n = PyTuple_GET_SIZE(key);
    items.reserve(n);
    for (Py_ssize_t k = 0; k < n; ++k) items.push_back(to_item(PyTuple_GET_ITEM(key, k), dev));
    return;
  }
  if (PyList_Check(key) && list_is_tuple(key)) {
    const Py_ssize_t n = PyList_GET_SIZE(key);
    items.reserve(n);
    for (Py_ssize_t k = 0; k < n; ++k) items.push_back(to_item(PyList_GET_ITEM(key, k), dev));
    return;
  }
  items.push_back(to_item(key, dev));
}

void apply_select(View& v, int64_t d, int64_t index, int64_t real_dim) {
  const int64_t size = v.sizes[d];
  if (index < -size || index >= size) {
    throw IndexError(message("index ", index, " is out of bounds for dimension ", real_dim, " with size ", size));
  }
  if (index < 0) index += size;
  v.offset += index * v.strides[d];
  v.sizes.erase(v.sizes.begin() + d);
  v.strides.erase(v.strides.begin() + d);
  v.flipped.erase(v.flipped.begin() + d);
}

void apply_slice(View& v, int64_t d, PyObject* slice) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(slice, &start, &stop, &step) < 0) throw py::error_already_set();
  const Py_ssize_t len = PySlice_AdjustIndices(static_cast<Py_ssize_t>(v.sizes[d]), &start, &stop, step);
  if (step < 0) {  // the same elements in increasing order, flipped later
    if (len > 0) start += (len - 1) * step;
    step = -step;
    v.flipped[d] = len > 1;
  }
  v.offset += static_cast<int64_t>(start) * v.strides[d];
  v.sizes[d] = len;
  int64_t stride = 0;
  // a step beyond the dim keeps at most one element, whose stride is never used: keep the
  // dim's own when stride * step does not fit (a slice with a huge step)
  if (!__builtin_mul_overflow(v.strides[d], static_cast<int64_t>(step), &stride)) {
    v.strides[d] = stride;
  } else if (len > 1) {
    throw IndexError(message("slice step ", step, " of dimension ", d, " overflows the stride"));
  }
}

void insert_dim(View& v, int64_t d) {
  const int64_t nd = static_cast<int64_t>(v.sizes.size());
  const int64_t stride = d < nd ? v.sizes[d] * v.strides[d] : 1;
  v.sizes.insert(v.sizes.begin() + d, 1);
  v.strides.insert(v.strides.begin() + d, stride);
  v.flipped.insert(v.flipped.begin() + d, 0);
}

// The result of parsing: a view of self, and the advanced indices over its leading dims (on
// self's device).
struct Parsed {
  Tensor view;
  std::vector<Tensor> adv;
  bool has_adv = false;
  int64_t masks = 0, int_indices = 0;  // bool masks (Python bools too) and integer index tensors in the key
  Shape flips;  // dims of view that negative-step slices reversed
};

void set_adv(Parsed& P, int64_t d, Tensor t) {
  if (static_cast<int64_t>(P.adv.size()) <= d) P.adv.resize(d + 1);
  P.adv[d] = std::move(t);
  P.has_adv = true;
}

Tensor bool_index(bool b, const Device& dev) {
  Tensor t = ember::empty({b ? 1 : 0}, ScalarType::Int64);
  if (b) *t->data<int64_t>() = 0;
  return to_device(t, dev);
}

Parsed parse(const Tensor& self, PyObject* key) {
  const Device dev = self->device();
  std::vector<Item> items;
  collect_items(key, items, dev);
  const int64_t nd = self->dim();
  int64_t specified = 0;
  for (const Item& it : items) {
    switch (it.kind) {
      case Item::Kind::Int:
      case Item::Kind::Slice: ++specified; break;
      case Item::Kind::Tensor: specified += it.t->dtype() == ScalarType::Bool ? it.t->dim() : 1; break;
      default: break;
    }
  }
  if (specified > nd) throw IndexError(message("too many indices for tensor of dimension ", nd));
  if (nd == 0) {
    for (const Item& it : items) {
      if (it.kind == Item::Kind::Int) {
        throw IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number");
      }
    }
  }
  Parsed P;
  View v(self);
  int64_t d = 0, real = 0;
  bool seen_ellipsis = false;
  for (const Item& it : items) {
    switch (it.kind) {
      case Item::Kind::Int:
        apply_select(v, d, it.i, real);
        ++real;
        break;
      case Item::Kind::Slice:
        apply_slice(v, d, it.slice);
        ++d;
        ++real;
        break;
      case Item::Kind::None:
        insert_dim(v, d);
        if (static_cast<int64_t>(P.adv.size()) > d) P.adv.insert(P.adv.begin() + d, Tensor());
        ++d;
        break;
      case Item::Kind::Ellipsis:
        if (!seen_ellipsis) {
          d += nd - specified;
          real += nd - specified;
          seen_ellipsis = true;
        }
        break;
      case Item::Kind::Bool:
        ++P.masks;
        insert_dim(v, d);
        if (static_cast<int64_t>(P.adv.size()) > d) P.adv.insert(P.adv.begin() + d, Tensor());
        set_adv(P, d, bool_index(it.b, dev));
        ++d;
        break;
      case Item::Kind::Tensor: {
        const Tensor& t = it.t;
        if (t->dtype() != ScalarType::Bool) {
          ++P.int_indices;
          set_adv(P, d, to_device(t, dev));
          ++d;
          ++real;
          break;
        }
        ++P.masks;
        const int64_t k = t->dim();
        for (int64_t j = 0; j < k; ++j) {
          if (t->sizes()[j] != v.sizes[d + j]) {
            throw IndexError(message("The shape of the mask ", shape_str(t->sizes()), " at index ", j,
                                     " does not match the shape of the indexed tensor ", shape_str(v.sizes),
                                     " at index ", d + j));
          }
        }
        Tensor nz;
        {
          MaybeNoGil nogil(t->numel());
          nz = to_device(ops::nonzero(t), dev);  // (n, k), computed where the mask is
        }
        const int64_t n = nz->sizes()[0];
        for (int64_t j = 0; j < k; ++j) set_adv(P, d + j, make_view(nz, {n}, {k}, nz->offset() + j));
        d += k;
        real += k;
        break;
      }
    }
  }
  P.flips = v.flip_dims();
  if (P.has_adv && !P.flips.empty()) {
    throw IndexError("a slice with a negative step cannot be combined with tensor (advanced) indices; flip the "
                     "tensor first, e.g. x.flip(dim)[...]");
  }
  P.view = make_view(self, std::move(v.sizes), std::move(v.strides), v.offset);
  return P;
}

// The fast path: one int or one slice on a tensor with dims (flips: see View).
bool simple_view(const Tensor& self, PyObject* key, Tensor& out, Shape& flips) {
  if (self->dim() == 0) return false;
  if (PyLong_CheckExact(key)) {
    const int64_t i = PyLong_AsLongLong(key);
    if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
    View v(self);
    apply_select(v, 0, i, 0);
    out = make_view(self, std::move(v.sizes), std::move(v.strides), v.offset);
    return true;
  }
  if (PySlice_Check(key)) {
    View v(self);
    apply_slice(v, 0, key);
    flips = v.flip_dims();
    out = make_view(self, std::move(v.sizes), std::move(v.strides), v.offset);
    return true;
  }
  return false;
}

// record_shapes: an index that is a tensor by its shape, any other by its Python type
void record_key(profiler::RecordScope& rec, py::handle key) {
  py::detail::make_caster<Tensor> tc;
  if (tc.load(key, false)) {
    rec.input(py::detail::cast_op<Tensor>(tc));
  } else {
    rec.input(Py_TYPE(key.ptr())->tp_name);
  }
}

// x[mask] with a bool mask of x's own shape on x's device: masked_select (one pass, no
// nonzero() index tensors). Other masks, and the dtypes masked_select does not take (uint16 to
// uint64, as PyTorch's), take the general path.
bool masked_get(const Tensor& self, PyObject* key, Tensor& out) {
  Tensor mask;
  if (is_wide_unsigned(self->dtype())) return false;
  if (!load_tensor(key, mask) || mask->dtype() != ScalarType::Bool || mask->dim() == 0) return false;
  if (mask->sizes() != self->sizes() || !same_device(mask->device(), self->device())) return false;
  MaybeNoGil nogil(self->numel());
  out = ops::masked_select(self, mask, Tensor());
  return true;
}

py::object getitem(py::object py_self, py::handle key) {
  profiler::RecordScope rec_("ember::__getitem__", "__getitem__", profiler::Kind::Op);
  const Tensor self = py_self.cast<Tensor>();
  if (rec_.wants_inputs()) {
    rec_.input(self);
    record_key(rec_, key);
  }
  Tensor result;
  Shape flips;
  if (!simple_view(self, key.ptr(), result, flips) && !masked_get(self, key.ptr(), result)) {
    Parsed P = parse(self, key.ptr());
    flips = P.flips;
    if (!P.has_adv) {
      result = P.view;
    } else {
      MaybeNoGil nogil(P.view->numel());
      result = on_cpu(self) ? index_get(P.view, P.adv) : ops::_index(P.view, P.adv);
    }
  }
  if (!flips.empty()) {
    MaybeNoGil nogil(result->numel());
    result = ops::flip(result, flips);
  }
  drop_internal_base(result, self);
  py::object py_result = py::cast(result);
  if (autograd_hook_installed() && needs_grad(self)) {
    call_autograd_hook("__getitem__", "function", py::make_tuple(py_self, key), py_result);
  }
  return py_result;
}

// The value of an assignment as a tensor: tensors as they are, numbers as weak 0-d tensors,
// lists and NumPy arrays converted.
Tensor value_tensor(py::handle value, const Tensor& self) {
  Tensor t;
  if (load_tensor(value.ptr(), t)) return t;
  Scalar s;
  if (scalar_from_python(value, s)) {
    check_value_fits("__setitem__", s, self->dtype(), false);
    return wrapped_scalar(s);
  }
  if (py::isinstance<py::array>(value) || PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    return tensor_from_data(value, self->dtype());
  }
  throw TypeError(message("can't assign a ", Py_TYPE(value.ptr())->tp_name, " to a ", dtype_name(self->dtype()),
                          " tensor"));
}

// The value where the [] operator uses it (see the top of the file): on self's device, or a
// CPU 0-d tensor (the ops take it as a scalar), or a tensor of another device with dims.
Tensor value_on(const Tensor& val, const Tensor& self) {
  const Device dev = self->device();
  if (same_device(val->device(), dev)) return val;
  if (on_cpu(val) ? val->dim() > 0 : val->dim() == 0) return to_device(val, dev);
  return val;
}

// x[mask] = number, with mask covering x's leading dims: a masked fill (no index tensors). A
// CPU mask of a tensor on a device moves there; a mask elsewhere is left to the general path.
bool masked_assign(const Tensor& self, PyObject* key, const Tensor& val) {
  if (val->dim() != 0) return false;
  Tensor mask;
  if (!load_tensor(key, mask) || mask->dtype() != ScalarType::Bool) return false;
  const int64_t k = mask->dim(), nd = self->dim();
  if (k == 0 || k > nd) return false;
  for (int64_t d = 0; d < k; ++d) {
    if (mask->sizes()[d] != self->sizes()[d]) return false;
  }
  if (!same_device(mask->device(), self->device())) {
    if (!on_cpu(mask)) return false;
    mask = to_device(mask, self->device());
  }
  Shape st = mask->strides();
  st.resize(nd, 0);
  Tensor m = make_view(mask, self->sizes(), std::move(st), mask->offset());
  MaybeNoGil nogil(self->numel());
  ops::masked_fill(self, m, val, self);
  return true;
}

// value without its leading size-1 dims: x[key] = value ignores them, as NumPy and PyTorch
// assignment do (broadcasting puts back the ones the target needs); index_put_ keeps them
Tensor without_leading_ones(const Tensor& value) {
  int64_t drop = 0;
  while (drop < value->dim() && value->sizes()[drop] == 1) ++drop;
  if (drop == 0) return value;
  return make_view(value, Shape(value->sizes().begin() + drop, value->sizes().end()),
                   Shape(value->strides().begin() + drop, value->strides().end()), value->offset());
}

void setitem(py::object py_self, py::handle key, py::handle value) {
  profiler::RecordScope rec_("ember::__setitem__", "__setitem__", profiler::Kind::Op);
  const Tensor self = py_self.cast<Tensor>();
  Tensor val = value_tensor(value, self);
  if (rec_.wants_inputs()) {
    rec_.input(self);
    record_key(rec_, key);
    rec_.input(val);
  }
  const bool hooked = autograd_hook_installed() && (needs_grad(self) || needs_grad(val));
  if (hooked) call_autograd_hook("__setitem__", "pre_inplace", py::make_tuple(py_self, key, py::cast(val)), py_self);
  const Tensor value_t = without_leading_ones(value_on(val, self));  // (the hooks see val itself)
  const bool host = on_cpu(self) && on_cpu(value_t);
  Tensor view;
  Parsed P;
  const bool done = masked_assign(self, key.ptr(), value_t);
  if (!done && !simple_view(self, key.ptr(), view, P.flips)) {
    P = parse(self, key.ptr());
    view = P.view;
  }
  if (!done) {
    MaybeNoGil nogil(view->numel());
    if (P.has_adv) {
      // A tensor value of another dtype is PyTorch's error unless the put is a masked fill; a
      // Python number is converted.
      if (!val->wrapped_number && value_t->dtype() != view->dtype() &&
          !index_put_fills_one_value(value_t->numel(), P.masks, P.int_indices)) {
        throw_index_put_dtypes(view->dtype(), value_t->dtype());
      }
      if (host) index_put(view, P.adv, value_t, false);
      else ops::index_put(view, P.adv, converted(value_t, view->dtype()), false, view);
    } else if (!host && on_cpu(value_t) && value_t->dim() == 0) {
      // a number into a tensor on a device: converted on the host as copy_ converts it (the
      // result then holds exactly in a Scalar), filled in without a transfer
      ops::fill(view, scalar_of(to_dtype(value_t, view->dtype())), view);
    } else {
      Tensor v = ops::expand(value_t, view->sizes());
      if (!P.flips.empty()) {
        v = ops::flip(v, P.flips);
      } else if (v->storage() == view->storage()) {
        v = ops::clone(v);
      }
      if (host) copy_into(view, v);
      else ops::copy(view, v, false, view);
    }
  }
  self->storage()->bump_version();
  if (hooked) call_autograd_hook("__setitem__", "inplace", py::make_tuple(py_self, key, py::cast(val)), py_self);
}

// self[key] += value for any key __setitem__ accepts (advanced indices with repeats add up):
// the backward of __getitem__ for autograd providers.
void index_add_key(const Tensor& self, py::handle key, py::handle value) {
  Tensor val = value_on(value_tensor(value, self), self);
  const bool host = on_cpu(self) && on_cpu(val);
  // a CPU 0-d value of a tensor on a device moves too: it is broadcast below
  if (!host && on_cpu(val)) val = to_device(val, self->device());
  Tensor view;
  Parsed P;
  if (!simple_view(self, key.ptr(), view, P.flips)) {
    P = parse(self, key.ptr());
    view = P.view;
  }
  MaybeNoGil nogil(view->numel());
  if (P.has_adv) {
    if (host) index_put(view, P.adv, val, true);
    else ops::index_put(view, P.adv, converted(val, view->dtype()), true, view);
  } else {
    Tensor v = ops::expand(val, view->sizes());
    if (!P.flips.empty()) {
      v = ops::flip(v, P.flips);
    } else if (v->storage() == view->storage()) {
      v = ops::clone(v);
    }
    ops::add(view, v, Scalar::from_int(1), view);
  }
}

}  // namespace

void bind_indexing(TensorClass& cls) {
  cls.def("_index_add_key_", [](py::object self, py::handle key, py::handle value) {
    Tensor t = self.cast<Tensor>();
    index_add_key(t, key, value);
    t->storage()->bump_version();
    return self;
  }, py::arg("key"), py::arg("value"),
     "self[key] += value for any [] key, repeated advanced indices adding up (the backward of __getitem__). "
     "Not recorded by autograd.");
  cls.def("__getitem__", &getitem, py::arg("key"),
          "self[key]: ints, slices (step > 0), None, Ellipsis give views; integer/bool tensors, lists and "
          "NumPy arrays index a copy.");
  cls.def("__setitem__", &setitem, py::arg("key"), py::arg("value"),
          "self[key] = value: value (a tensor or number) broadcast to the indexed shape and cast to self's dtype.");
}

}  // namespace ember
