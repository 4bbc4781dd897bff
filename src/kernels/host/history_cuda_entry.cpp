// Public CUDA entry point of kernels::history: the input checks, then the CUDA translation
// unit when this build has one, else NotCompiled (the dispatch point of the history kernel).
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
                      HistoryWorkspace& workspace) {
  constexpr const char* who = "history_fft_cuda";
  check_history_fft(block, spectra, who);
#if FRACMFG_HAVE_CUDA
  if (block.components == 0 || block.output_rows == 0 || block.signal_rows == 0) return;
  cuda::history_fft(block, spectra, workspace.options().max_batch_doubles,
                    workspace.options().cuda_device, &workspace.cuda_resources().cache());
#else
  (void)workspace;
  throw NotCompiled(std::string("the CUDA backend (") + who + ")", {"cpu"});
#endif
}

}  // namespace fracmfg::kernels
