// for_each_share (compute.h): contiguous shares of a bulk host job on the kernel's OpenMP team, so copies beside
// the arithmetic use the threads `--threads` gives the arithmetic, and the same pool of waiting threads.
#include <algorithm>

#include "pevp/pe_array/compute.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace pevp::pe {

void for_each_share(std::size_t count, std::size_t min_share, unsigned threads,
                    const std::function<void(std::size_t begin, std::size_t end)>& share) {
  if (count == 0) return;
  const std::size_t worth = std::max<std::size_t>(1, count / std::max<std::size_t>(1, min_share));
  const std::size_t team = std::min<std::size_t>(std::max(threads, 1u), worth);
  if (team <= 1) {
    share(0, count);
    return;
  }
#ifdef _OPENMP
  [[maybe_unused]] const int team_size = static_cast<int>(team);  // read by the OpenMP pragma only
#pragma omp parallel num_threads(team_size)
  {
    // The runtime may give fewer threads than asked: the shares follow the team it gave.
    const auto n = static_cast<std::size_t>(omp_get_num_threads()), t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t begin = count * t / n, end = count * (t + 1) / n;
    if (begin < end) share(begin, end);
  }
#else
  share(0, count);
#endif
}

}  // namespace pevp::pe
