// Stopping a long command on SIGINT or SIGTERM without losing what it has done (docs/running.md, "Interrupting a
// run"). The signal handler only notes the signal (async-signal-safe); the command looks at the note at its safe
// points -- VirtualPlatform::run between slices of simulated time, a sweep between its points -- and ends there,
// writing what it has. A second signal ends the process at once.
#pragma once

#include <stdexcept>
#include <string>

#include <systemc>

namespace pevp::platform {

// While a watch lives, SIGINT and SIGTERM are noted instead of ending the process (a signal the process inherited
// as ignored stays ignored); a second one while the first is noted ends the process at once with status 128 +
// signal. The previous dispositions come back when the watch ends. One watch at a time (a second throws
// std::logic_error).
class InterruptWatch {
 public:
  // interrupt_system_calls: a blocking system call (waitpid) returns EINTR on the signal, so a caller blocked in
  // one sees the note at once; otherwise the calls restart (SA_RESTART) and the note is seen at the next safe point.
  explicit InterruptWatch(bool interrupt_system_calls = false);
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;
};

// In a child forked while a watch lives (a sweep's point, platform/sweep/runner.h): gives SIGINT and SIGTERM back
// the dispositions the watch replaced and forgets the watch and its note, as an exec'd process starts, so the
// child's own command can watch them. Nothing in the parent changes.
void forget_inherited_watch();

// The signal noted since the current watch began (SIGINT or SIGTERM), 0 when none or no watch lives.
int interrupt_signal();
// Whether a watch lives: VirtualPlatform::run then simulates in slices, looking at the note between them.
bool interrupt_watched();

// "SIGINT", "SIGTERM" (else "signal N").
std::string signal_name(int signal);
// The exit status of a command a signal interrupted: 128 + signal (130 for SIGINT, 143 for SIGTERM), the shell's
// convention for a process the signal ended.
inline int interrupted_status(int signal) { return 128 + signal; }

// Thrown by VirtualPlatform::run when a watched signal stopped the simulation. The platform's state is as it was at
// the stop (the driver program is suspended where it was): its statistics and recordings can still be written.
struct Interrupted : std::runtime_error {
  int signal;
  sc_core::sc_time at;  // the simulated time of the stop
  Interrupted(int sig, const sc_core::sc_time& when);
};

}  // namespace pevp::platform
