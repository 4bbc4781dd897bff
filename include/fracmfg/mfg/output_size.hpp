#pragma once
// mfg::mfg_output_bytes: the disk space an mfg run needs, estimated from its deck before the
// solve so that a full disk fails in the first second (io::H5Writer::check_output_paths).

#include "fracmfg/io/config.hpp"
#include "fracmfg/io/h5_writer.hpp"

namespace fracmfg::mfg {

/// results: u and m (8 bytes per grid point) at every time level written (n = 0, every
/// output.every levels and the last one), the mass per level and the convergence history
/// (at most max_iterations entries); u and m as time series (io::series_bytes), plus
/// io::kH5DatasetOverhead per other dataset and io::kH5FileOverhead. checkpoints (0 when
/// output.checkpoint_every is 0; the driver may still write one when a stop signal arrives, and it
/// is counted whenever checkpoints are on): twice one checkpoint, which holds u and m at every time
/// level, and with Anderson acceleration of depth k the 2 + 2 k earlier states of the same size.
/// Pure function.
io::OutputBytes mfg_output_bytes(const io::MfgConfig& config, const io::OutputConfig& output);

}  // namespace fracmfg::mfg
