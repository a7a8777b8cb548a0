// The load generator of server-echo, run as a separate process (the same binary
// with --client) so that its memory and faults are not the server's.
// Single-threaded.
#pragma once

namespace echo {

// argv after "--client": PORT BODY_BYTES RATE CONNECTIONS DURATION_S.
// Descriptor 0 carries "go" from the server, descriptor 3 takes "ready" and the
// result line "done COMPLETED ERRORS ELAPSED_MS P50_MS P99_MS" (or "error WHY").
int client_main(int argc, char** argv);

}  // namespace echo
