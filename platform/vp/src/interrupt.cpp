#include "pevp/platform/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>

namespace pevp::platform {
namespace {

// Written by the handler only; read by the command between its steps.
volatile std::sig_atomic_t g_noted = 0;
bool g_watching = false;
struct sigaction g_old_int, g_old_term;

extern "C" void note_signal(int sig) {
  if (g_noted != 0) _exit(interrupted_status(sig));  // the second one: at once, writing nothing
  g_noted = sig;
}

void watch(int sig, struct sigaction& old, bool interrupt_system_calls) {
  ::sigaction(sig, nullptr, &old);
  if (old.sa_handler == SIG_IGN) return;  // e.g. `nohup`, or a background job of a shell without job control
  struct sigaction action {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = interrupt_system_calls ? 0 : SA_RESTART;
  ::sigaction(sig, &action, nullptr);
}

}  // namespace

InterruptWatch::InterruptWatch(bool interrupt_system_calls) {
  if (g_watching) throw std::logic_error("InterruptWatch: one watch at a time");
  g_noted = 0;
  g_watching = true;
  watch(SIGINT, g_old_int, interrupt_system_calls);
  watch(SIGTERM, g_old_term, interrupt_system_calls);
}

InterruptWatch::~InterruptWatch() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  g_watching = false;
  g_noted = 0;
}

void forget_inherited_watch() {
  if (!g_watching) return;
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  g_watching = false;
  g_noted = 0;
}

int interrupt_signal() { return g_watching ? static_cast<int>(g_noted) : 0; }
bool interrupt_watched() { return g_watching; }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

Interrupted::Interrupted(int sig, const sc_core::sc_time& when)
    : std::runtime_error("interrupted by " + signal_name(sig) + " at " + when.to_string() + " simulated"),
      signal(sig), at(when) {}

}  // namespace pevp::platform
