// Idle hooks around a thread's blocking wait: what an event loop or a pool
// worker calls just before it blocks and just after it wakes.
#pragma once

#include <string>

#include "mhwl/allocator_probe.h"

namespace mhwl {

// none: no call. inline: the allocator's idle API is called around each wait.
// handoff: the same calls, only for waits expected to be long (a parked pool
// worker after its idle timeout, an event loop with no timer due soon).
enum class IdleMode { None, Inline, Handoff };

struct IdleHooks {
  IdleMode mode = IdleMode::None;
  IdleApi api;

  void start(bool long_wait) const {
    if (active(long_wait)) api.start();
  }
  void end(bool long_wait) const {
    if (active(long_wait)) api.end();
  }

 private:
  bool active(bool long_wait) const {
    return api.available() && (mode == IdleMode::Inline || (mode == IdleMode::Handoff && long_wait));
  }
};

}  // namespace mhwl
