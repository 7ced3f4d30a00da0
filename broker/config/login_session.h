// A login session to a cluster whose bastion asks for a one-time code after
// the key (NERSC, TACC, Jean Zay ... style): `skyslurm login CLUSTER` opens
// an OpenSSH master connection (ControlMaster) to the cluster's ProxyJump
// host, the code typed once on the user's terminal; every later connection to
// the cluster's login node (skyslurmd's libssh pool, rsync, salloc's ssh) is
// forwarded through that master (`ssh -S SOCKET -W host:port bastion`), so
// the daemon never sees a code and never prompts. The session lasts
// `session_lifetime`; after it, and before the first login, a cluster marked
// `one_time_code` is ruled out with NeedsLoginReason().
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::config {

struct LoginSession {
  std::string cluster;
  // The cluster's ProxyJump: a Host of `clusters_file` (then ssh reads that
  // file: its user, key and known hosts apply) or [user@]host[:port].
  std::string jump;
  std::string clusters_file;  // "" when `jump` is no Host there
  std::string socket;         // <run dir>/sessions/<cluster>.sock, the master's
  std::string until_file;     // <socket>.until: when it lapses, epoch seconds
};

// The session of `cluster` under `run_dir` (config/run_dir.h).
LoginSession SessionFor(const std::string& run_dir, const std::string& cluster,
                        const std::string& jump, const std::string& clusters_file,
                        bool jump_is_a_host);

// "<cluster> needs a one-time code: run skyslurm login <cluster>".
std::string NeedsLoginReason(const std::string& cluster);

// When the session lapses, if it holds at `now`: its time has not passed,
// and its socket is this user's own and a live master answers on it.
std::optional<std::chrono::system_clock::time_point> SessionUntil(
    const LoginSession& session, std::chrono::system_clock::time_point now);
// Whether a session's time has passed while its master's socket is still
// there (the master is to be closed); false for a master being opened (no
// lapse time written yet).
bool SessionLapsed(const LoginSession& session, std::chrono::system_clock::time_point now);

// The ssh that carries a connection to %h:%p through the bastion, never
// prompting (BatchMode): through the session's master when `through_master`.
// As argv, and as one line for a ProxyCommand (%h and %p left to fill).
std::vector<std::string> JumpArgv(const LoginSession& session, bool through_master);
std::string JumpCommandLine(const LoginSession& session, bool through_master);

// The ProxyCommand that reaches the cluster: through the master while the
// session holds; without one, `ssh -W` to the bastion (never prompting; ""
// `for_openssh`, which follows the file's ProxyJump itself), unless the
// cluster asks for a one-time code: then FailedPrecondition with
// NeedsLoginReason(), nothing tried, and a lapsed master left is closed.
// The session's lapse file and folder are trusted only when this user's own
// and private.
Result<std::string> SessionProxyCommand(const LoginSession& session, bool one_time_code,
                                        bool for_openssh = false);

// Opens the master (the code asked on the terminal, or by SSH_ASKPASS): it
// goes to the background once authenticated, for `lifetime`.
std::vector<std::string> OpenMasterArgv(const LoginSession& session, std::chrono::seconds lifetime);
// Closes it (`ssh -O exit`).
std::vector<std::string> CloseMasterArgv(const LoginSession& session);

// Reads the lapse time written by `skyslurm login` ("" or junk: nullopt).
std::optional<std::chrono::system_clock::time_point> ParseSessionUntil(const std::string& text);

}  // namespace skyslurm::config
