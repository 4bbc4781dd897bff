// fracmfg: the command-line driver.
//
//   fracmfg --version
//   fracmfg info
//   fracmfg validate inputs/crowd_1d.yaml
//   mpiexec -n 2 fracmfg run inputs/crowd_1d-ci.yaml
#include <cstdio>

#include "fracmfg/core/guarded_main.hpp"

int main(int argc, char** argv) {
  return fracmfg::core::guarded_main(argc, argv, [](fracmfg::core::Environment& env) {
    env.log().info("fracmfg");
    return 0;
  });
}
