#include "broker/sync/remote_folder.h"

#include "broker/util/command.h"

namespace skyslurm::sync {
namespace {

// $1: the folder. stat -c is GNU coreutils' and BusyBox's (a login node's).
// A symbolic link is judged by its owner (who may change where it points;
// a link's own mode is always 777) and by what it points at.
// One line: csh, a login shell some sites give, refuses a newline inside
// quotes.
constexpr const char* kScript =
    "d=$1; me=$(id -u); umask 077; "
    "judge() { "
    "set -- \"$1\" $(stat -c '%u %a' -- \"$1\" 2>/dev/null); "
    "[ $# -eq 3 ] || { echo \"skyslurm: cannot read who owns $1\" >&2; exit 97; }; "
    "[ \"$2\" = \"$me\" ] && return 0; "
    "if [ \"$2\" = 0 ]; then "
    "case $3 in [1357][0-7][0-7][0-7]) return 0 ;; esac; "
    "case $3 in *[2367]) echo \"skyslurm: refusing to make the job's folder $d: $1 is writable "
    "by every user (mode $3) and not sticky\" >&2; exit 97 ;; esac; "
    "return 0; fi; "
    "echo \"skyslurm: refusing to make the job's folder $d: $1 belongs to uid $2, not to you "
    "(uid $me): its owner could swap the job's files\" >&2; exit 97; }; "
    "owner() { "
    "set -- \"$1\" $(stat -c '%u' -- \"$1\" 2>/dev/null); "
    "[ \"$2\" = \"$me\" ] || [ \"$2\" = 0 ] || { echo \"skyslurm: refusing to make the job's "
    "folder $d: the link $1 belongs to uid $2, not to you (uid $me) or root: its owner could point "
    "it elsewhere\" >&2; exit 97; }; }; "
    "p=$d; "
    "while :; do "
    "if [ -L \"$p\" ]; then owner \"$p\"; judge \"$p/.\"; elif [ -e \"$p\" ]; then judge \"$p\"; "
    "fi; "
    "case $p in /) break ;; /*/*) p=${p%/*} ;; /*) p=/ ;; */*) p=${p%/*} ;; *) break ;; esac; "
    "done; "
    "mkdir -p -- \"$d\"";

}  // namespace

std::string MakePrivateFolderCommand(const std::string& dest) {
  return "sh -c " + ShellQuote(kScript) + " skyslurm-folder " + ShellQuote(dest);
}

}  // namespace skyslurm::sync
