// The profiler's recording side (profiler.h).
#include "ember/runtime/profiler.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include "ember/runtime/cuda_hooks.h"
#include "ember/runtime/dispatch.h"

namespace ember::profiler {

std::atomic<bool> g_enabled{false};

// One thread's events. Its owner appends and closes; stop() takes them, under `mu` (which
// nobody holds for long, so the lock is uncontended while a profile runs).
struct ThreadState {
  std::mutex mu;
  uint64_t session = 0;  // the profile the buffer belongs to; 0 when collected
  int64_t tid = 0;
  std::deque<Event> events;  // a deque: appending never moves the open events
  std::vector<GpuEvent> gpu;
  std::vector<size_t> open;   // indices of the open events, innermost last
  int64_t pending = -1;       // an Op event whose dispatcher has not run yet
  const char* pending_key = nullptr;
  std::atomic<bool> alive{true};

  void reset(uint64_t s) {
    session = s;
    events.clear();
    gpu.clear();
    open.clear();
    pending = -1;
  }
};

namespace {

constexpr uint64_t kShapes = 1, kMemory = 2, kStack = 4, kCuda = 8, kFake = 16, kFlagBits = 8;

// The running profile: its number (shifted) and its option flags, read together in one load;
// 0 while none runs.
std::atomic<uint64_t> g_state{0};
std::mutex g_control_mu;  // start() and stop()
uint64_t g_last_session = 0;
int64_t g_start_ns = 0;
std::atomic<uint64_t> g_next_id{1};
std::atomic<StackCapture> g_stack_capture{nullptr};

std::mutex g_registry_mu;
std::vector<std::shared_ptr<ThreadState>> g_threads;

struct ThreadHolder {
  std::shared_ptr<ThreadState> state;
  ~ThreadHolder() {
    if (state) state->alive = false;
  }
};

thread_local ThreadHolder t_holder;

ThreadState* this_thread() {
  if (!t_holder.state) {
    auto s = std::make_shared<ThreadState>();
    s->tid = static_cast<int64_t>(::syscall(SYS_gettid));
    std::lock_guard<std::mutex> lock(g_registry_mu);
    g_threads.push_back(s);
    t_holder.state = std::move(s);
  }
  return t_holder.state.get();
}

uint64_t next_id() { return g_next_id.fetch_add(1, std::memory_order_relaxed); }

int64_t host_net_bytes() {
  const MemoryStats s = cpu_memory_stats();
  return s.allocated_bytes.allocated - s.allocated_bytes.freed;
}

// The current CUDA device and its caching allocator's net allocated bytes; -1 when unknown.
int device_net_bytes(int64_t& net) {
  try {
    const CudaHooks& h = cuda_hooks();
    if (h.device_count() == 0) return -1;
    const int dev = h.current_device();
    DeviceCachingAllocator* a = h.caching_allocator(dev);
    if (!a) return -1;
    const MemoryStat s = a->stats().pools[0].allocated_bytes;
    net = s.allocated - s.freed;
    return dev;
  } catch (const std::exception&) {
    return -1;
  }
}

std::vector<std::string> capture_stack() {
  StackCapture fn = g_stack_capture.load(std::memory_order_acquire);
  return fn ? fn() : std::vector<std::string>();
}

// ---- CUDA events: a pool per device, and each device's time base for the profile ----

std::mutex g_gpu_mu;
std::map<int, std::vector<void*>> g_event_pool;
constexpr size_t kPoolCap = 4096;
struct DeviceBase {
  void* event;
  int64_t host_ns;  // when `event` completed, on the host clock
};
std::map<int, DeviceBase> g_bases;  // this profile's

void* take_event(int device) {
  {
    std::lock_guard<std::mutex> lock(g_gpu_mu);
    auto& pool = g_event_pool[device];
    if (!pool.empty()) {
      void* e = pool.back();
      pool.pop_back();
      return e;
    }
  }
  return cuda_hooks().create_event(device, /*timing=*/true, false, false);
}

void give_event(int device, void* e) noexcept {
  if (!e) return;
  try {
    {
      std::lock_guard<std::mutex> lock(g_gpu_mu);
      auto& pool = g_event_pool[device];
      if (pool.size() < kPoolCap) {
        pool.push_back(e);
        return;
      }
    }
    cuda_hooks().destroy_event(device, e);
  } catch (...) {
  }
}

// The first kernel of a profile on a device fixes the device's time base: an event that
// completes on an idle device, so its GPU time is (within microseconds) the host time
// around it. Kernel times are then offsets from it. False when the profile has ended.
bool ensure_base(int device, uint64_t session) {
  std::lock_guard<std::mutex> lock(g_gpu_mu);
  if ((g_state.load(std::memory_order_acquire) >> kFlagBits) != session) return false;
  if (g_bases.count(device)) return true;
  const CudaHooks& h = cuda_hooks();
  h.synchronize(device);
  void* e = h.create_event(device, true, false, false);
  const int64_t t0 = now_ns();
  h.record_event(device, e, h.current_stream(device));
  h.synchronize_event(e);
  const int64_t t1 = now_ns();
  g_bases[device] = DeviceBase{e, t0 + (t1 - t0) / 2};
  return true;
}

// Maps the kernels' GPU times onto the host clock and returns their events to the pool.
// A kernel whose times cannot be read (an error on its device) is left out.
void resolve_kernels(std::vector<GpuEvent>& kernels) {
  const CudaHooks& h = cuda_hooks();
  std::map<int, DeviceBase> bases;
  {
    std::lock_guard<std::mutex> lock(g_gpu_mu);
    bases.swap(g_bases);
  }
  std::vector<GpuEvent> kept;
  kept.reserve(kernels.size());
  for (GpuEvent& k : kernels) {
    if (!k.ev_end) {  // fake: timed already
      kept.push_back(k);
      continue;
    }
    auto base = bases.find(k.device);
    bool timed = false;
    try {
      if (base != bases.end()) {
        h.synchronize_event(k.ev_end);
        const double ms0 = h.elapsed_ms(base->second.event, k.ev_start);
        const double ms1 = h.elapsed_ms(base->second.event, k.ev_end);
        k.start_ns = base->second.host_ns + static_cast<int64_t>(std::llround(ms0 * 1e6));
        k.end_ns = std::max(k.start_ns, base->second.host_ns + static_cast<int64_t>(std::llround(ms1 * 1e6)));
        timed = true;
      }
    } catch (const std::exception&) {
    }
    give_event(k.device, k.ev_start);
    give_event(k.device, k.ev_end);
    k.ev_start = k.ev_end = nullptr;
    if (timed) kept.push_back(k);
  }
  for (auto& [device, base] : bases) give_event(device, base.event);
  kernels.swap(kept);
}

// A child forked while a profile runs (a DataLoader worker) does not record: nobody would
// collect its events. Its locks may have been held by threads that do not exist there, so it
// gets fresh ones, and the other threads' buffers and the CUDA events are left alone (leaked).
void reset_in_child() {
  g_enabled.store(false, std::memory_order_relaxed);
  g_state.store(0, std::memory_order_relaxed);
  new (&g_control_mu) std::mutex();
  new (&g_registry_mu) std::mutex();
  new (&g_gpu_mu) std::mutex();
  (new std::vector<std::shared_ptr<ThreadState>>())->swap(g_threads);
  (new std::map<int, std::vector<void*>>())->swap(g_event_pool);
  (new std::map<int, DeviceBase>())->swap(g_bases);
  if (t_holder.state) {  // the forking thread's own buffer
    new (&t_holder.state->mu) std::mutex();
    t_holder.state->reset(0);
    g_threads.push_back(t_holder.state);
  }
}

[[maybe_unused]] const int g_atfork_registered = (pthread_atfork(nullptr, nullptr, reset_in_child), 0);

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void set_stack_capture(StackCapture fn) { g_stack_capture.store(fn, std::memory_order_release); }

void start(const Options& o) {
  std::lock_guard<std::mutex> control(g_control_mu);
  if (g_state.load(std::memory_order_relaxed) != 0) {
    throw std::runtime_error("profiler: a profile is already running (profiles do not nest)");
  }
  const uint64_t flags = (o.record_shapes ? kShapes : 0) | (o.profile_memory ? kMemory : 0) |
                         (o.with_stack ? kStack : 0) | (o.cuda ? kCuda : 0) | (o.fake_gpu ? kFake : 0);
  const uint64_t session = ++g_last_session;
  {  // threads that ended since the last profile, their events collected, are dropped
    std::lock_guard<std::mutex> lock(g_registry_mu);
    g_threads.erase(std::remove_if(g_threads.begin(), g_threads.end(),
                                   [](const std::shared_ptr<ThreadState>& t) {
                                     std::lock_guard<std::mutex> l(t->mu);
                                     return !t->alive && t->session == 0;
                                   }),
                    g_threads.end());
  }
  g_start_ns = now_ns();
  g_state.store((session << kFlagBits) | flags, std::memory_order_release);
  g_enabled.store(true, std::memory_order_release);
}

Result stop() {
  std::lock_guard<std::mutex> control(g_control_mu);
  const uint64_t state = g_state.load(std::memory_order_relaxed);
  if (state == 0) throw std::runtime_error("profiler: no profile is running");
  const uint64_t session = state >> kFlagBits;
  g_enabled.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(g_gpu_mu);  // ensure_base() sees it ended
    g_state.store(0, std::memory_order_release);
  }
  Result r;
  r.start_ns = g_start_ns;
  r.stop_ns = now_ns();
  std::vector<std::shared_ptr<ThreadState>> threads;
  {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    threads = g_threads;
  }
  for (const auto& t : threads) {
    std::lock_guard<std::mutex> lock(t->mu);
    if (t->session == session) {
      for (Event& e : t->events) {
        if (e.end_ns >= 0) r.events.push_back(std::move(e));
      }
      for (GpuEvent& g : t->gpu) r.kernels.push_back(g);
    }
    t->reset(0);
  }
  resolve_kernels(r.kernels);
  return r;
}

uint64_t push_range(const std::string& name) {
  const uint64_t state = g_state.load(std::memory_order_acquire);
  if (state == 0) return 0;
  const uint64_t session = state >> kFlagBits;
  ThreadState* ts = this_thread();
  std::vector<std::string> stack;
  if (state & kStack) stack = capture_stack();
  int64_t host = 0, device = 0;
  if (state & kMemory) {
    host = host_net_bytes();
    if (state & kCuda) device_net_bytes(device);
  }
  std::lock_guard<std::mutex> lock(ts->mu);
  if (ts->session != session) ts->reset(session);
  Event& e = ts->events.emplace_back();
  e.id = next_id();
  e.parent = ts->open.empty() ? 0 : ts->events[ts->open.back()].id;
  e.depth = static_cast<int32_t>(ts->open.size());
  e.dynamic_name = name;
  e.kind = Kind::User;
  e.tid = ts->tid;
  e.stack = std::move(stack);
  e.cpu_mem = -host;  // the bytes at the end are added by pop_range
  e.cuda_mem = -device;
  ts->open.push_back(ts->events.size() - 1);
  ts->pending = -1;
  e.start_ns = now_ns();
  return e.id;
}

void pop_range(uint64_t id) {
  if (id == 0) return;
  const int64_t t = now_ns();
  const uint64_t state = g_state.load(std::memory_order_acquire);
  ThreadState* ts = this_thread();
  int64_t host = 0, device = 0;
  if (state & kMemory) {
    host = host_net_bytes();
    if (state & kCuda) device_net_bytes(device);
  }
  std::lock_guard<std::mutex> lock(ts->mu);
  if (ts->session == 0 || ts->session != (state >> kFlagBits)) return;
  for (size_t k = ts->open.size(); k-- > 0;) {
    Event& e = ts->events[ts->open[k]];
    if (e.id != id) continue;
    e.end_ns = t;
    e.cpu_mem = (state & kMemory) ? e.cpu_mem + host : 0;
    e.cuda_mem = (state & kMemory) ? e.cuda_mem + device : 0;
    if (ts->pending == static_cast<int64_t>(ts->open[k])) ts->pending = -1;
    ts->open.erase(ts->open.begin() + static_cast<std::ptrdiff_t>(k));
    return;
  }
}

// ---- RecordScope ----

void RecordScope::begin(const char* name, const char* key, Kind kind, const char* kernel) {
  const uint64_t state = g_state.load(std::memory_order_acquire);
  if (state == 0) return;
  const uint64_t session = state >> kFlagBits;
  ThreadState* ts = this_thread();
  {
    std::lock_guard<std::mutex> lock(ts->mu);
    if (ts->session != session) ts->reset(session);
    state_ = ts;
    session_ = session;
    kernel_ = kernel;
    gpu_ = state & kCuda;
    fake_ = state & kFake;
    if (kind == Kind::Dispatch && ts->pending >= 0 && !ts->open.empty() &&
        ts->open.back() == static_cast<size_t>(ts->pending) && std::strcmp(key, ts->pending_key) == 0) {
      // the dispatcher of the op its binding just opened: the same call, one event
      owner_ = ts->events[static_cast<size_t>(ts->pending)].id;
      ts->pending = -1;
      start_ns_ = now_ns();
      return;
    }
    Event& e = ts->events.emplace_back();
    e.id = owner_ = next_id();
    e.parent = ts->open.empty() ? 0 : ts->events[ts->open.back()].id;
    e.depth = static_cast<int32_t>(ts->open.size());
    e.static_name = name;
    e.kind = kind;
    e.tid = ts->tid;
    index_ = static_cast<int64_t>(ts->events.size() - 1);
    ts->open.push_back(static_cast<size_t>(index_));
    ts->pending = kind == Kind::Op ? index_ : -1;
    ts->pending_key = key;
  }
  want_inputs_ = (state & kShapes) && kind != Kind::User;
  if ((state & kStack) && kind != Kind::Dispatch) stack_ = capture_stack();
  if (state & kMemory) {
    mem0_[0] = host_net_bytes();
    if (gpu_) mem_device_ = device_net_bytes(mem0_[1]);
  }
  start_ns_ = now_ns();
}

void RecordScope::end() {
  const int64_t t = now_ns();
  int64_t host = 0, device = 0;
  const bool memory = index_ >= 0 && (g_state.load(std::memory_order_relaxed) & kMemory);
  if (memory) {
    host = host_net_bytes() - mem0_[0];
    if (mem_device_ >= 0) {
      int64_t now = 0;
      if (device_net_bytes(now) == mem_device_) device = now - mem0_[1];
    }
  }
  ThreadState* ts = state_;
  std::lock_guard<std::mutex> lock(ts->mu);
  if (ts->session != session_) return;  // the profile ended meanwhile
  if (fake_ && kernel_) {
    GpuEvent& g = ts->gpu.emplace_back();
    g.id = next_id();
    g.op_id = owner_;
    g.name = kernel_;
    g.tid = ts->tid;
    g.launch_ns = g.start_ns = start_ns_;
    g.end_ns = t;
  }
  if (index_ < 0) return;
  Event& e = ts->events[static_cast<size_t>(index_)];
  e.start_ns = start_ns_;
  e.end_ns = t;
  e.inputs = std::move(inputs_);
  e.stack = std::move(stack_);
  e.cpu_mem = host;
  e.cuda_mem = device;
  const size_t idx = static_cast<size_t>(index_);
  if (!ts->open.empty() && ts->open.back() == idx) {
    ts->open.pop_back();
  } else {  // closed out of order (a user range left open inside the op)
    auto it = std::find(ts->open.begin(), ts->open.end(), idx);
    if (it != ts->open.end()) ts->open.erase(it);
  }
  if (ts->pending == index_) ts->pending = -1;
}

void RecordScope::input(const Tensor& t) {
  Input& in = inputs_.emplace_back();
  if (!t) return;  // an optional tensor not given
  in.type = dtype_name(t->dtype());
  in.shapes.push_back(t->sizes());
}

void RecordScope::input(const std::vector<Tensor>& ts) {
  Input& in = inputs_.emplace_back();
  in.is_list = true;
  in.type = "TensorList";
  for (const Tensor& t : ts) in.shapes.push_back(t ? t->sizes() : Shape());
}

void RecordScope::input(const char* type) { inputs_.emplace_back().type = type; }

// ---- GpuRange ----

void GpuRange::begin(const RecordScope& op, std::initializer_list<DeviceArg> args,
                     const std::optional<Device>* explicit_device) {
  int device = -1;
  void* e0 = nullptr;
  void* e1 = nullptr;
  try {
    if (explicit_device && *explicit_device) {
      if ((*explicit_device)->type == DeviceType::CUDA) device = resolve_cuda_index(**explicit_device);
    } else {
      for (const DeviceArg& a : args) {
        auto visit = [&](const Tensor& t) {
          if (device < 0 && t && t->device().type == DeviceType::CUDA) device = resolve_cuda_index(t->device());
        };
        if (a.tensor) {
          visit(*a.tensor);
        } else {
          for (const Tensor& t : *a.list) visit(t);
        }
      }
    }
    if (device < 0 || !ensure_base(device, op.session_)) return;
    const CudaHooks& h = cuda_hooks();
    const uint64_t stream = h.current_stream(device);
    e0 = take_event(device);
    e1 = take_event(device);
    launch_ns_ = now_ns();
    h.record_event(device, e0, stream);
    state_ = op.state_;
    session_ = op.session_;
    owner_ = op.owner_;
    name_ = op.kernel_ ? op.kernel_ : "ember::cuda::kernel";
    device_ = device;
    stream_ = stream;
    ev_start_ = e0;
    ev_end_ = e1;
  } catch (const std::exception&) {  // profiling never makes an op fail
    give_event(device, e0);
    give_event(device, e1);
  }
}

void GpuRange::end() {
  try {
    cuda_hooks().record_event(device_, ev_end_, stream_);
  } catch (const std::exception&) {
    give_event(device_, ev_start_);
    give_event(device_, ev_end_);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->session == session_) {
      GpuEvent& g = state_->gpu.emplace_back();
      g.id = next_id();
      g.op_id = owner_;
      g.name = name_;
      g.device = device_;
      g.stream = stream_;
      g.tid = state_->tid;
      g.launch_ns = launch_ns_;
      g.ev_start = ev_start_;
      g.ev_end = ev_end_;
      return;
    }
  }
  give_event(device_, ev_start_);  // the profile ended while the kernel ran
  give_event(device_, ev_end_);
}

}  // namespace ember::profiler
