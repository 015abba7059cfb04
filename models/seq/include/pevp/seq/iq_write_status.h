// How many records of a write into the instruction-queue window the SEQ queued. A write the queue refuses because
// the SEQ stopped on a fault while the write waited for room (D-IQ-STOPPED) has queued the records before the one
// that found no room, and a TLM response status cannot say how many: an initiator that attaches this extension
// gets the count back, so it can keep exactly the records the queue did not take and write them once the fault is
// cleared. Ignorable: an initiator without it (an RTL master through ApbToTlm, a test) loses only the count.
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

  tlm::tlm_extension_base* clone() const override { return new IqWriteStatus(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const IqWriteStatus&>(other);
  }
};

}  // namespace pevp::seq
