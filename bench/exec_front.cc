// The floor the shim's pass-through is measured against (submit_bench): a
// minimal static front that only execs the real command named by
// $SKYSLURM_BENCH_REAL with the same arguments. No option parsing, no PATH
// search: what any wrapper costs at the least.
#include <unistd.h>

#include <cstdlib>

int main(int, char** argv) {
  const char* real = std::getenv("SKYSLURM_BENCH_REAL");
  if (real == nullptr) return 127;
  execv(real, argv);
  return 127;
}
