// new_handler.cpp - runs the program's new-handler for the nothrow forms of operator
// new, which return null when the handler throws (as libstdc++'s do). The only file of
// the library built with exceptions. What a catch needs from libstdc++ is referenced
// weakly, so libscav.so still needs only libc: a handler exists only in a program
// that set one with std::set_new_handler, i.e. one that has libstdc++. Stateless.
#include "new_handler.h"

extern "C" {
void* __cxa_begin_catch(void*) noexcept __attribute__((weak));
void __cxa_end_catch() __attribute__((weak));
}
asm(".weak __gxx_personality_v0");

namespace scav {

bool call_new_handler_nothrow(void (*handler)()) noexcept {
  try {
    handler();
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace scav
