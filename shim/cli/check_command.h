// `skyslurm check`: whether each configured cluster answers, and if not,
// why (name resolution, refused, host key, authentication, Slurm) and how
// to fix it. Exit 0 only when every cluster answers.
#pragma once

namespace skyslurm::cli {

int RunCheck();

}  // namespace skyslurm::cli
