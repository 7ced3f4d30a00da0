#include "broker/job/steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::job {
namespace {

using ::testing::ElementsAre;
using ::testing::FieldsAre;
using ::testing::IsEmpty;

TEST(StepsTest, FindsThePluginOptionsOfTheScriptsOwnSteps) {
  const char script[] =
      "#!/bin/bash\n"
      "#SBATCH --container-image=ignored  # a directive: the job's own option, not a step's\n"
      "srun hostname\n"
      "srun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 --container-mounts /d:/d -N2 "
      "python train.py --container-name=not-srun\n"
      "  /usr/bin/srun --mpi=pmix --site-opt \"a b\" ./a.out & # srun --comment-opt\n"
      "echo done; salloc --x11-ish -N1 true\n"
      "srun -Q --container-image img true\n";
  EXPECT_THAT(
      FindStepPluginOptions(script, 3),
      ElementsAre(FieldsAre(4, "srun", "container-image"), FieldsAre(4, "srun", "container-mounts"),
                  FieldsAre(5, "srun", "site-opt"), FieldsAre(6, "salloc", "x11-ish"),
                  FieldsAre(7, "srun", "container-image")));
}

TEST(StepsTest, SlurmsOwnOptionsAndOtherCommandsAreNoPluginsOptions) {
  EXPECT_THAT(FindStepPluginOptions("#!/bin/sh\nsrun --ntasks=2 --gpus-per-task=1 --het-group=0 "
                                    "--cpu-bind=cores true\nmpirun --whatever\n",
                                    2),
              IsEmpty());
  // A line that does not split (an open quote) is skipped, not an error.
  EXPECT_THAT(FindStepPluginOptions("srun --x 'open\n", 1), IsEmpty());
}

}  // namespace
}  // namespace skyslurm::job
