// new_handler.h - the nothrow operator new's call of the new-handler (new_handler.cpp,
// built with exceptions). Stateless; any thread.
#pragma once

namespace scav {

// Calls handler; false if it threw (whatever it threw), true if it returned.
bool call_new_handler_nothrow(void (*handler)()) noexcept;

}  // namespace scav
