// SIGCHLD as a descriptor: the harness blocks SIGCHLD and reads it from a
// signalfd, so that a traced program's stops wake the sampler's poll at once
// and no system call of the harness is interrupted by a child's change of
// state. Spawned children start with an empty signal mask (spawn.cpp). Main
// thread only (the harness starts no threads).
#pragma once

namespace mh {

// Readable when a child of the harness changed state (exited, stopped under a
// trace); made on the first call. -1 when it could not be made.
int child_signal_fd();
// Empties it (the states themselves are read with waitid).
void drain_child_signals();

}  // namespace mh
