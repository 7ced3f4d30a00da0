// #SBATCH lines as sbatch 22.05 reads them: a line that starts (column 0)
// with "#SBATCH" (or the deprecated "#SLURM"); reading stops at the first
// line whose first non-blank character is not '#'; words are split at
// blanks, quotes group, a backslash escapes, an unquoted '#' starts a
// comment; "hetjob"/"packjob" separates heterogeneous job components.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::job {

struct Directive {
  int line = 0;            // 1-based line number in the script
  std::string text;        // the whole line, verbatim
  std::string magic;       // "#SBATCH" or "#SLURM"
  std::vector<std::string> words;
  bool het_separator = false;  // the line starts a new hetjob component
};

struct DirectiveScan {
  std::vector<Directive> directives;
  // The first line sbatch does not read directives from (the first
  // command), or lines+1 when there is none.
  int body_start_line = 1;
  bool hetjob = false;
  std::vector<std::string> warnings;
};

// `file` names the script in messages ("job.sh:3: unmatched '"'").
Result<DirectiveScan> ScanDirectives(std::string_view script, std::string_view file);

// One directive's text after the magic word, split as sbatch splits it.
Result<std::vector<std::string>> SplitDirectiveWords(std::string_view text, std::string_view file,
                                                     int line);

}  // namespace skyslurm::job
