// The APB PPROT attribute carried on a TLM transaction: the protected
// arr_seq face (tpb_arr_seq_top_protected) answers only privileged accesses --
// the security boundary of 003 section 7. A transaction without the extension
// is an unprivileged, non-secure data access.
#pragma once

#include <tlm>

namespace pevp::regfile {

class ApbProt : public tlm::tlm_extension<ApbProt> {
 public:
  bool privileged = false;   // PPROT[0]
  bool nonsecure = true;     // PPROT[1]
  bool instruction = false;  // PPROT[2]

  ApbProt() = default;
  explicit ApbProt(bool is_privileged) : privileged(is_privileged) {}

  tlm::tlm_extension_base* clone() const override { return new ApbProt(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const ApbProt&>(other);
  }
};

inline bool is_privileged(const tlm::tlm_generic_payload& trans) {
  const ApbProt* prot = trans.get_extension<ApbProt>();
  return prot != nullptr && prot->privileged;
}

}  // namespace pevp::regfile
