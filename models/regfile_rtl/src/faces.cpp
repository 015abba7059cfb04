// The face names and descriptions; present in every build, with or without Verilator.
#include <stdexcept>
#include <string>

#include "pevp/regfile_rtl/rtl_regfile.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace pevp::regfile_rtl {

std::string_view face_name(Face f) {
  switch (f) {
    case Face::Top: return "top";
    case Face::Cluster: return "cluster";
    case Face::Protected: return "protected";
    case Face::Vp: return "vp";
  }
  return "?";
}

Face parse_face(std::string_view name) {
  for (Face f : kFaces)
    if (face_name(f) == name) return f;
  throw std::invalid_argument("unknown register file '" + std::string(name) +
                              "': expected top, cluster, protected or vp");
}

const regfile::RegFileDesc& face_desc(Face f) {
  switch (f) {
    case Face::Top: return regs::tpb_arr_seq_top_host_visible::regfile_desc();
    case Face::Cluster: return regs::tpb_arr_seq_cluster_host_visible::regfile_desc();
    case Face::Protected: return regs::tpb_arr_seq_top_protected::regfile_desc();
    case Face::Vp: break;
  }
  return regs::vp_seq::regfile_desc();
}

}  // namespace pevp::regfile_rtl
