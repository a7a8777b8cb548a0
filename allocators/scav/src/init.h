// init.h - process and thread set-up: options, the thread-exit key, fork handlers.
// process_init runs once (the first allocation of any thread); the rest is per thread.
#pragma once

namespace scav {

struct Heap;

void process_init();
// Register the thread's heap so it is given back when the thread exits.
void process_thread_attach(Heap* h);

}  // namespace scav
