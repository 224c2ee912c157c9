// What the generated bindings use to apply an op's autocast policy (autocast.h): a Plan is
// made when autocast is on for some device type, learns the device type from the op's first
// tensor argument, and casts the eligible floating-point tensor arguments through Tensor.to's
// path, so autograd records the cast and gradients reach the sources in their own dtype.
#pragma once

#include <optional>
#include <vector>

#include "ember/runtime/autocast.h"
#include "ember/python/bind_common.h"

namespace ember::autocast {

// t cast to `to` as Tensor.to(to) would (the autograd hook records it); reuses the cached cast
// of a float32 leaf that requires grad inside an autocast region (bind_autocast.cpp).
Tensor cast_arg(const Tensor& t, ScalarType to);

class Plan {
 public:
  Plan(Policy cpu, Policy cuda) : cpu_(cpu), cuda_(cuda) {}

  // Pass 1: the device type is the first defined tensor argument's.
  void see(const Tensor& t) {
    if (!has_device_ && t && !t->wrapped_number) {
      device_ = t->device().type;
      has_device_ = true;
    }
  }
  void see(const std::optional<Tensor>& t) { if (t) see(*t); }
  void see(const Operand& o) { see(o.t); }
  void see(const std::optional<Operand>& o) { if (o) see(o->t); }
  void see(const std::vector<Tensor>& ts) { for (const auto& t : ts) see(t); }
  void see(const std::vector<std::optional<Tensor>>& ts) { for (const auto& t : ts) see(t); }
  template <class T> void see(const T&) {}

  // Whether the op is on the autocast list of an enabled device type; fixes the target dtype
  // (Promote: found by widen()).
  bool resolve() {
    if (!has_device_ || !is_enabled(device_)) return false;
    policy_ = device_ == DeviceType::CUDA ? cuda_ : cpu_;
    if (policy_ == Policy::Lower) target_ = get_dtype(device_);
    if (policy_ == Policy::Fp32) target_ = ScalarType::Float32;
    return policy_ != Policy::None;
  }
  bool promotes() const { return policy_ == Policy::Promote; }

  // Pass 2 (Promote): the widest eligible floating dtype.
  void widen(const Tensor& t) {
    if (!eligible(t, device_)) return;
    target_ = target_ ? promote_types(*target_, t->dtype()) : t->dtype();
  }
  void widen(const std::optional<Tensor>& t) { if (t) widen(*t); }
  void widen(const Operand& o) { widen(o.t); }
  void widen(const std::optional<Operand>& o) { if (o) widen(o->t); }
  void widen(const std::vector<Tensor>& ts) { for (const auto& t : ts) widen(t); }
  void widen(const std::vector<std::optional<Tensor>>& ts) { for (const auto& t : ts) widen(t); }
  template <class T> void widen(const T&) {}

  // Pass 3: the arguments the op runs on.
  Tensor cast(const Tensor& t) const {
    if (!target_ || !eligible(t, device_) || t->dtype() == *target_) return t;
    return cast_arg(t, *target_);
  }
  std::optional<Tensor> cast(const std::optional<Tensor>& t) const {
    return t ? std::optional<Tensor>(cast(*t)) : t;
  }
  Operand cast(const Operand& o) const { return Operand{cast(o.t)}; }
  std::optional<Operand> cast(const std::optional<Operand>& o) const {
    return o ? std::optional<Operand>(Operand{cast(o->t)}) : o;
  }
  std::vector<Tensor> cast(const std::vector<Tensor>& ts) const {
    std::vector<Tensor> out;
    out.reserve(ts.size());
    for (const auto& t : ts) out.push_back(cast(t));
    return out;
  }
  std::vector<std::optional<Tensor>> cast(const std::vector<std::optional<Tensor>>& ts) const {
    std::vector<std::optional<Tensor>> out;
    out.reserve(ts.size());
    for (const auto& t : ts) out.push_back(cast(t));
    return out;
  }
  template <class T> const T& cast(const T& x) const { return x; }

 private:
  Policy cpu_, cuda_, policy_ = Policy::None;
  DeviceType device_ = DeviceType::CPU;
  bool has_device_ = false;
  std::optional<ScalarType> target_;
};

}  // namespace ember::autocast
