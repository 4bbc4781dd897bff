// Public CUDA entry point of kernels::history: the input checks, then the CUDA translation
// unit when this build has one, else NotCompiled (the dispatch point of the history kernel).
#include <cstdint>
#include <string>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"
#include "fracmfg/kernels/history.hpp"

#if FRACMFG_HAVE_CUDA
#include "kernels/cuda/history_cuda.hpp"
#endif

namespace fracmfg::kernels {

void history_fft_cuda(const HistoryBlock& block, const HistorySpectra& spectra,
                      HistoryWorkspace& workspace, int chunks) {
  constexpr const char* who = "history_fft_cuda";
  check_history_fft(block, spectra, who);
  if (chunks < 1) throw Error(std::string(who) + ": chunks must be >= 1");
#if FRACMFG_HAVE_CUDA
  if (block.components == 0 || block.output_rows == 0 || block.signal_rows == 0) return;
  const std::int64_t c = block.components;
  const std::int64_t per_batch = (c + chunks - 1) / chunks;
  cuda::history_fft(block, spectra, per_batch * spectra.fft_length, workspace.options().cuda_device,
                    &workspace.cuda_resources().cache());
#else
  (void)workspace;
  throw NotCompiled(std::string("the CUDA backend (") + who + ")", {"cpu"});
#endif
}

}  // namespace fracmfg::kernels
