// init.h - process and thread set-up: options, the thread-exit key, fork handlers.
// process_init runs once (the first allocation of any thread); the rest is per thread.
#pragma once

namespace scav {

struct Heap;

void process_init();
// Run heap_thread_exit(h) when the calling thread exits (h: its heap, or g_empty_heap
// for a thread without one that holds remote-free batches). False if it cannot.
bool process_thread_attach(Heap* h);

}  // namespace scav
