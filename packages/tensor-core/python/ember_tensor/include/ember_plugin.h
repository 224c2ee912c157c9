/* ember_plugin.h: the tensor core's C API for compiled plugins.
 *
 * A compiled plugin never links against the core and never shares C++ or pybind11 types with
 * it. It reaches the core through one table of C function pointers, published by the Python
 * module `ember_tensor` as the capsule `ember_tensor._C_API` (capsule name
 * "ember_tensor._C_API"). `ember_import_c_api()` below fetches the table and checks its
 * version:
 *
 *   - EMBER_PLUGIN_ABI_MAJOR changes when a field of a struct here changes meaning or place:
 *     a plugin built for another major is refused at import.
 *   - EMBER_PLUGIN_API_LEVEL grows when fields are appended: a plugin built against level N
 *     runs on any core of the same major whose level is >= N.
 *
 * Include it from a CPython extension; the directory is `ember_tensor.get_include()`.
 * docs/plugins.md has a worked example (examples/plugins/alloc-tracking).
 */
#ifndef EMBER_PLUGIN_H
#define EMBER_PLUGIN_H

#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EMBER_PLUGIN_ABI_MAJOR 1
#define EMBER_PLUGIN_API_LEVEL 1
#define EMBER_C_API_CAPSULE "ember_tensor._C_API"

/* A host (CPU) memory allocator. Every tensor the core creates on the CPU takes its memory
 * from the installed host allocator; memory the core did not allocate (NumPy arrays shared
 * through from_numpy, DLPack imports) is never passed to it.
 *
 *   allocate(ctx, nbytes)          nbytes >= 1. Returns memory aligned to at least 64 bytes,
 *                                  or NULL when it cannot (the core raises an "out of memory" RuntimeError that
 *                                  names the allocator and the size). May be called from any
 *                                  thread, with or without the GIL: it must be thread-safe and
 *                                  must not call into Python.
 *   deallocate(ctx, ptr, nbytes)   gives back a block with the nbytes it was allocated with.
 *                                  Same threading rules; may run during interpreter shutdown.
 *   name                           shown by `python -m ember doctor` and in error messages.
 *
 * The struct (and what name and ctx point to) must stay valid until the process exits: the
 * core keeps the pointer, and blocks may be freed at any time, including at exit. */
typedef struct EmberHostAllocator {
  const char* name;
  void* ctx;
  void* (*allocate)(void* ctx, size_t nbytes);
  void (*deallocate)(void* ctx, void* ptr, size_t nbytes);
} EmberHostAllocator;

typedef struct EmberCApi {
  uint32_t abi_major; /* EMBER_PLUGIN_ABI_MAJOR of the core */
  uint32_t api_level; /* EMBER_PLUGIN_API_LEVEL of the core */

  /* level 1 */

  /* Installs the process's host allocator. Allowed once, and only before the core's first
   * CPU allocation. Returns 0, or -1 with a Python exception set (RuntimeError naming when
   * and where the host allocator was first used, or which allocator is installed already).
   * Call it with the GIL held. */
  int (*set_host_allocator)(const EmberHostAllocator* allocator);
  /* The name of the host allocator in use (or to be used): "ember caching allocator" unless
   * one was installed. */
  const char* (*host_allocator_name)(void);
} EmberCApi;

/* Imports ember_tensor and returns its C API table, or NULL with a Python exception set
 * (ImportError when ember_tensor is missing or its ABI major differs, or its API level is
 * below the one this plugin was built against). Call it with the GIL held, typically from the
 * plugin's PyInit function. */
static inline const EmberCApi* ember_import_c_api(void) {
  const EmberCApi* api = (const EmberCApi*)PyCapsule_Import(EMBER_C_API_CAPSULE, 0);
  if (api == NULL) return NULL;
  if (api->abi_major != EMBER_PLUGIN_ABI_MAJOR || api->api_level < EMBER_PLUGIN_API_LEVEL) {
    PyErr_Format(PyExc_ImportError,
                 "this plugin was built for ember_tensor's C API %d.%d, but the installed "
                 "ember_tensor provides %u.%u (ABI major must match, API level must be at "
                 "least the plugin's): rebuild the plugin against the installed ember-tensor-core",
                 EMBER_PLUGIN_ABI_MAJOR, EMBER_PLUGIN_API_LEVEL, (unsigned)api->abi_major,
                 (unsigned)api->api_level);
    return NULL;
  }
  return api;
}

#ifdef __cplusplus
}
#endif

#endif /* EMBER_PLUGIN_H */
