// A fresh SystemC simulation context, for a process that runs one simulation after another (a sweep's worker,
// D-SWEEP-WORKER). IEEE 1666 gives a process one elaboration and one run; the reference kernel keeps all of that state
// in its current sc_simcontext, so a new context is a new start: time zero, no object, no process, no event, the
// kernel before elaboration.
#pragma once

namespace pevp::platform {

// Replaces the current SystemC context with a new one and clears the report handler's counts. Call it only when no
// SystemC object of this program is left (every platform destroyed) and outside any simulation: the old context is
// deleted with whatever of its own it still held (the processes of the last run, suspended threads' stacks).
void fresh_simulation_context();

}  // namespace pevp::platform
