/* The compiled half of ember-core-tracking: a host allocator that counts what it hands out
 * (installed into ember_tensor through its C API, ember_plugin.h), and a float32 ReLU kernel.
 * Talks to the core only through the C API table and raw addresses; links nothing of it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ember_plugin.h"

/* ---- the tracking host allocator ---- */

static atomic_llong live_bytes, peak_bytes, total_allocs, total_frees;
static int poison_freed; /* fill freed blocks with 0xDB: stale reads show up as garbage */

static void* tracking_allocate(void* ctx, size_t nbytes) {
  (void)ctx;
  size_t rounded = (nbytes + 63) & ~(size_t)63; /* aligned_alloc wants a multiple of 64 */
  void* p = aligned_alloc(64, rounded);
  if (p == NULL) return NULL;
  long long now = atomic_fetch_add(&live_bytes, (long long)nbytes) + (long long)nbytes;
  long long peak = atomic_load(&peak_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
  }
  atomic_fetch_add(&total_allocs, 1);
  return p;
}

static void tracking_deallocate(void* ctx, void* ptr, size_t nbytes) {
  (void)ctx;
  if (poison_freed) memset(ptr, 0xDB, nbytes);
  free(ptr);
  atomic_fetch_sub(&live_bytes, (long long)nbytes);
  atomic_fetch_add(&total_frees, 1);
}

static const EmberHostAllocator tracking_allocator = {
    "ember-core-tracking", NULL, tracking_allocate, tracking_deallocate};

static const EmberCApi* api;

static PyObject* install(PyObject* self, PyObject* args) {
  int poison = 0;
  if (!PyArg_ParseTuple(args, "|p", &poison)) return NULL;
  poison_freed = poison;
  if (api->set_host_allocator(&tracking_allocator) != 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* stats(PyObject* self, PyObject* unused) {
  return Py_BuildValue("{s:L,s:L,s:L,s:L}", "live_bytes", atomic_load(&live_bytes), "peak_bytes",
                       atomic_load(&peak_bytes), "allocations", atomic_load(&total_allocs),
                       "frees", atomic_load(&total_frees));
}

static PyObject* reset_peak(PyObject* self, PyObject* unused) {
  atomic_store(&peak_bytes, atomic_load(&live_bytes));
  Py_RETURN_NONE;
}

static PyObject* active_allocator(PyObject* self, PyObject* unused) {
  return PyUnicode_FromString(api->host_allocator_name());
}

/* ---- relu over contiguous float32: relu_f32(src_address, dst_address, n) ---- */

static PyObject* relu_f32(PyObject* self, PyObject* args) {
  unsigned long long src_addr, dst_addr;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "KKn", &src_addr, &dst_addr, &n)) return NULL;
  const float* src = (const float*)(uintptr_t)src_addr;
  float* dst = (float*)(uintptr_t)dst_addr;
  Py_BEGIN_ALLOW_THREADS
  for (Py_ssize_t i = 0; i < n; ++i) {
    float v = src[i];
    dst[i] = v > 0.0f ? v : (v != v ? v : 0.0f); /* NaN stays NaN, as in the built-in kernel */
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS, "install(poison=False): become ember_tensor's host allocator"},
    {"stats", stats, METH_NOARGS, "{'live_bytes', 'peak_bytes', 'allocations', 'frees'}"},
    {"reset_peak", reset_peak, METH_NOARGS, "peak_bytes := live_bytes"},
    {"active_allocator", active_allocator, METH_NOARGS, "the name of the core's host allocator"},
    {"relu_f32", relu_f32, METH_VARARGS, "relu_f32(src, dst, n): dst[i] = max(src[i], 0), float32"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ember_core_tracking._native",
                                    "ember-core-tracking's compiled half", -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
  api = ember_import_c_api();
  if (api == NULL) return NULL;
  return PyModule_Create(&module);
}
