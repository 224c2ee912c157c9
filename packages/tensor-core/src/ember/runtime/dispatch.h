// How an op's dispatcher (generated: ember::ops::<op>) picks the device kernel.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "ember/runtime/cuda_hooks.h"
#include "ember/core/tensor.h"

namespace ember {

// One tensor argument (or list of tensors) of an op, named for error messages.
struct DeviceArg {
  const char* name;
  const Tensor* tensor;              // may hold null (an optional tensor not given)
  const std::vector<Tensor>* list;
};

// The slow path: the op has a non-CPU tensor. Checks that the tensors share one device
// (CPU 0-d tensors may join as scalars; anything goes when `mixed`), else RuntimeError
// naming the op, both devices and the arguments on them. Returns true (run the CUDA kernel).
bool check_same_device(const char* op, std::initializer_list<DeviceArg> args, bool mixed);

// Whether the op runs its CUDA kernel: an explicit device= argument decides when given,
// else any CUDA tensor among the arguments does. The CPU-only path is a few loads per tensor.
inline bool dispatch_to_cuda(const char* op, std::initializer_list<DeviceArg> args,
                             const std::optional<Device>* explicit_device, bool mixed) {
  if (explicit_device && *explicit_device) {
    if ((*explicit_device)->type == DeviceType::CPU) return false;
    resolve_cuda_index(**explicit_device);  // "device cuda is not available: ..." first
    return true;
  }
  for (const DeviceArg& a : args) {
    if (a.tensor) {
      if (*a.tensor && (*a.tensor)->device().type != DeviceType::CPU) return check_same_device(op, args, mixed);
    } else {
      for (const Tensor& t : *a.list) {
        if (t && t->device().type != DeviceType::CPU) return check_same_device(op, args, mixed);
      }
    }
  }
  return false;
}

}  // namespace ember
