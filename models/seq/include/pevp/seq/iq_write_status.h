// How many records of a write into the instruction-queue window the SEQ queued. A write the queue refuses because
// the SEQ stopped on a fault while the write waited for room (D-IQ-STOPPED) has queued the records before the one
// that found no room, and a TLM response status cannot say how many: an initiator that attaches this extension
// gets the count back, so it can keep exactly the records the queue did not take and write them once the fault is
// cleared. Ignorable: an initiator without it (an RTL master through ApbToTlm, a test) loses only the count.
//
// An initiator that must not be held by back-pressure (the request executor of `pe-vp serve` and the C API: a client
// that writes into a full queue must not stall the VP's only bus master) clears wait_for_room: a write that does not
// fit then queues nothing and fails at once, and `space` says how many records the queue had room for
// (D-IQ-NO-WAIT).
//
// Header-only and free of the SEQ's model, so the driver, which reaches the engine through the bus alone and links
// no model, can use it.
#pragma once

#include <tlm>

namespace pevp::seq {

class IqWriteStatus : public tlm::tlm_extension<IqWriteStatus> {
 public:
  // Records of this write that entered the queue, counted from its first: all of them when the write completed
  // with TLM_OK_RESPONSE, fewer when the queue refused the rest, none when it refused the write as a whole.
  unsigned queued = 0;
  // Set by the initiator: whether a write from a thread waits for room in a full queue (the back-pressure of
  // seq.h), or is refused whole at once.
  bool wait_for_room = true;
  // Set by the SEQ when it refused a write for lack of room: the places free then (of its queue_depth).
  unsigned space = 0;

  tlm::tlm_extension_base* clone() const override { return new IqWriteStatus(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const IqWriteStatus&>(other);
  }
};

}  // namespace pevp::seq
