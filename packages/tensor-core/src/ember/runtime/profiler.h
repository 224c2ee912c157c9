// The profiler's recording side (ember_tensor.profiler is its Python face, bind_profiler.cpp
// its bindings). While a profile runs, every op called from Python (generated bindings and
// the hand-bound ones), every op an op calls through its dispatcher, and the user's ranges
// (record_function) become events in a buffer of the thread that ran them; stop() collects
// them. While no profile runs, a RecordScope costs one relaxed atomic load and nothing else.
//
// An op called from Python opens a scope in its binding (Kind::Op) and another in its
// dispatcher (Kind::Dispatch). The dispatcher's scope joins the binding's event when it is
// the same op, directly inside it; otherwise (an op called by an op) it is an event of its
// own, nested in its caller's. With CUDA requested, an op whose kernel runs on a CUDA device
// brackets the kernel with a cudaEvent pair on the current stream (GpuRange): a GPU event
// linked to the op's event by id, timed when the profile stops.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {
struct DeviceArg;
}

namespace ember::profiler {

// What a profile records.
struct Options {
  bool record_shapes = false;   // input shapes and types of ops
  bool profile_memory = false;  // bytes allocated minus freed during each range
  bool with_stack = false;      // the Python stack where an op was called
  bool cuda = false;            // time the CUDA kernels of ops on CUDA devices
  // For tests on machines without a GPU: every dispatched op gets a "kernel" timed by the
  // host clock, so the GPU side (events, links, columns) can be checked anywhere.
  bool fake_gpu = false;
};

enum class Kind : uint8_t {
  Op,        // an op called from Python
  Dispatch,  // an op's dispatcher: a nested op, or joins the Op around it
  User,      // a user range (record_function)
};

// One argument of an op, as record_shapes sees it.
struct Input {
  std::string type;           // a tensor's dtype name ("float32"), else the schema type ("Scalar")
  std::vector<Shape> shapes;  // one shape for a tensor, one per element for a list, none else
  bool is_list = false;
};

// A closed range on one thread. Times are steady-clock nanoseconds (now_ns()).
struct Event {
  uint64_t id = 0;
  uint64_t parent = 0;  // the id of the enclosing range on the same thread; 0 at top level
  const char* static_name = nullptr;  // ops: a string literal
  std::string dynamic_name;           // user ranges
  Kind kind = Kind::Op;
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = -1;  // -1 while open
  int32_t depth = 0;    // 0 at top level
  std::vector<Input> inputs;
  int64_t cpu_mem = 0;   // host allocator: bytes allocated minus freed during the range
  int64_t cuda_mem = 0;  // the current CUDA device's caching allocator, likewise
  std::vector<std::string> stack;  // innermost frame first: "file(line): function"
  const char* name() const { return static_name ? static_name : dynamic_name.c_str(); }
};

// A kernel on a GPU, launched inside the op `op_id`.
struct GpuEvent {
  uint64_t id = 0;  // unique among the profile's events (the trace's flow id)
  uint64_t op_id = 0;
  const char* name = nullptr;  // "ember::cuda::add"
  int device = 0;
  uint64_t stream = 0;
  int64_t tid = 0;        // the launching thread
  int64_t launch_ns = 0;  // host time of the launch
  int64_t start_ns = 0;   // GPU times mapped onto the host clock, resolved by stop()
  int64_t end_ns = 0;
  void* ev_start = nullptr;  // cudaEvent_t pair (null for fake_gpu)
  void* ev_end = nullptr;
};

struct Result {
  std::vector<Event> events;  // closed ranges of every thread, each thread's in start order
  std::vector<GpuEvent> kernels;
  int64_t start_ns = 0;
  int64_t stop_ns = 0;
};

extern std::atomic<bool> g_enabled;
inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

int64_t now_ns();
// Starts a profile (RuntimeError when one runs already); stop() ends it and returns what was
// recorded (RuntimeError when none runs). Ranges still open at stop() are left out.
void start(const Options& options);
Result stop();

// User ranges whose two ends are separate calls (record_function). push_range returns the
// range's id, or 0 when no profile runs; pop_range(0) does nothing, nor does popping a range
// that is not open on the calling thread.
uint64_t push_range(const std::string& name);
void pop_range(uint64_t id);

// with_stack: returns the calling thread's Python stack, innermost first. Installed by the
// bindings; called only where the GIL is held (bindings and user ranges).
using StackCapture = std::vector<std::string> (*)();
void set_stack_capture(StackCapture fn);

struct ThreadState;

// An op's range, from construction to destruction.
class RecordScope {
 public:
  // name: the event's name, a string literal ("ember::add"); key: the op's C++ name, which
  // matches a binding's scope with its dispatcher's; kernel: the name of the op's GPU events.
  RecordScope(const char* name, const char* key, Kind kind, const char* kernel = nullptr) {
    if (enabled()) begin(name, key, kind, kernel);
  }
  ~RecordScope() {
    if (state_) end();
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

  // Whether the op's arguments are wanted (record_shapes, and the scope has its own event):
  // then input() takes each argument in order.
  bool wants_inputs() const { return state_ && want_inputs_; }
  void input(const Tensor& t);
  void input(const std::vector<Tensor>& ts);
  void input(const char* type);  // an argument that is not a tensor

 private:
  friend class GpuRange;
  void begin(const char* name, const char* key, Kind kind, const char* kernel);
  void end();

  ThreadState* state_ = nullptr;  // null: not recording
  uint64_t session_ = 0;
  int64_t index_ = -1;  // this scope's event in the thread's buffer; -1 when joined
  uint64_t owner_ = 0;  // the id of the event the op's GPU work is linked to
  const char* kernel_ = nullptr;
  bool want_inputs_ = false;
  bool gpu_ = false;   // the profile times CUDA kernels
  bool fake_ = false;  // the profile fakes them (Options::fake_gpu)
  int mem_device_ = -1;
  int64_t start_ns_ = 0;
  int64_t mem0_[2] = {0, 0};  // host, device: bytes allocated minus freed so far, at begin
  std::vector<Input> inputs_;
  std::vector<std::string> stack_;
};

// The GPU side of an op whose kernel runs on a CUDA device: placed by the dispatcher around
// the kernel call. Does nothing unless the op's scope records and the profile times CUDA.
class GpuRange {
 public:
  GpuRange(const RecordScope& op, std::initializer_list<DeviceArg> args,
           const std::optional<Device>* explicit_device) {
    if (op.state_ && op.gpu_) begin(op, args, explicit_device);
  }
  ~GpuRange() {
    if (ev_end_) end();
  }
  GpuRange(const GpuRange&) = delete;
  GpuRange& operator=(const GpuRange&) = delete;

 private:
  void begin(const RecordScope& op, std::initializer_list<DeviceArg> args,
             const std::optional<Device>* explicit_device);
  void end();

  ThreadState* state_ = nullptr;
  uint64_t session_ = 0;
  uint64_t owner_ = 0;
  const char* name_ = nullptr;
  int device_ = 0;
  uint64_t stream_ = 0;
  int64_t launch_ns_ = 0;
  void* ev_start_ = nullptr;
  void* ev_end_ = nullptr;
};

}  // namespace ember::profiler
