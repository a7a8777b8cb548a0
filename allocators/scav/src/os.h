// os.h - every system call the allocator makes (see os.cpp for the contract).
// Stateless: any thread may call any function at any time, including the scavenger
// thread, which runs without a libc thread descriptor of its own.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace scav::os {

constexpr size_t kPageSize = 4096;

// Contract: sizes and addresses are multiples of kPageSize; each call returns 0 or a
// positive errno, never touches errno, never allocates and takes no lock.
int reserve(size_t size, size_t align, void** out);  // read-write, lazily committed
int map_fresh(size_t size, void** out);               // same, no alignment beyond a page
int unmap(void* p, size_t size);
int purge(void* p, size_t size, bool lazy);           // lazy: MADV_FREE, else MADV_DONTNEED
int no_huge_pages(void* p, size_t size);
int remap(void* p, size_t old_size, size_t new_size, void** out);

// Futex on a 32-bit word. wait returns 0 when woken, ETIMEDOUT, EAGAIN (value changed)
// or EINTR; timeout_ms < 0 waits without end.
int futex_wait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeout_ms);
void futex_wake(std::atomic<uint32_t>* word, int count);

// membarrier(2), private expedited: register once per process (and again in a fork
// child), then fence() runs a full memory barrier on every running thread of the
// process. Returns 0 or an errno (ENOSYS, EINVAL on old kernels).
int fence_register();
int fence_all_threads();

uint64_t now_ms();  // CLOCK_MONOTONIC
void yield();
void sleep_ms(unsigned ms);
void write_stderr(const char* s, size_t n);
[[noreturn]] void die();

// Start a thread with clone(2): its own stack and a private dummy TLS block, all
// signals blocked, named `name`. No malloc, no libc locks; see os.cpp for why.
int start_thread(void (*fn)(void*), void* arg, const char* name);

}  // namespace scav::os
