// The device check of op dispatch (dispatch.h).
#include "ember/runtime/dispatch.h"

namespace ember {

bool check_same_device(const char* op, std::initializer_list<DeviceArg> args, bool mixed) {
  if (mixed) return true;
  const char* first_name = nullptr;
  Device first;
  auto visit = [&](const char* name, const Tensor& t) {
    if (!t) return;
    const Device d = t->device();
    // a CPU 0-d tensor (a Python number, a scalar) may join CUDA tensors as an input
    if (d.type == DeviceType::CPU && t->dim() == 0 && std::string(name) != "out") return;
    if (!first_name) {
      first_name = name;
      first = d;
    } else if (d != first) {
      throw std::runtime_error(message(op, ": expected all tensors to be on the same device, but found at least "
                                       "two devices, ", first.str(), " and ", d.str(), " ('", first_name,
                                       "' is on ", first.str(), ", '", name, "' is on ", d.str(), ")"));
    }
  };
  for (const DeviceArg& a : args) {
    if (a.tensor) {
      visit(a.name, *a.tensor);
    } else {
      for (const Tensor& t : *a.list) visit(a.name, t);
    }
  }
  return true;
}

}  // namespace ember
